from __future__ import annotations

from django.urls import path

from tests.web.djproject.billing import views

urlpatterns = [
    path("invoices/<int:pk>/bump", views.bump),
    path("invoices/<int:pk>/bump-unlocked", views.bump_unlocked),
    path("invoices/<int:pk>/slow", views.slow),
    path("invoices/<int:pk>", views.InvoiceView.as_view()),
    path("invoices/<int:pk>/checking", views.CheckingView.as_view()),
    path("search", views.search),
]
