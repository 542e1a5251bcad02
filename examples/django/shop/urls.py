from django.urls import path

from shop import views

urlpatterns = [
    path("invoices/<int:pk>/pay", views.pay),
    path("invoices/<int:pk>/refund", views.Refund.as_view()),
]
