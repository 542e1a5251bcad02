import time

from django.http import HttpRequest, JsonResponse
from django.views import View

from quorumlock.django import LockedViewMixin, locked
from shop.models import Invoice


def charge_card(invoice: Invoice) -> None:
    time.sleep(0.05)  # the payment provider's round trip
    invoice.charges += 1


# One request per invoice at a time, on every worker and machine. Another one waits up
# to 5 s, then gets 409 Conflict. The name comes from the URL's <int:pk>.
@locked("invoice:{pk}", ttl=30, timeout=5)
def pay(request: HttpRequest, pk: int) -> JsonResponse:
    invoice, _ = Invoice.objects.get_or_create(pk=pk)
    if invoice.paid:
        return JsonResponse({"invoice": pk, "status": "already paid"})
    charge_card(invoice)
    invoice.paid = True
    invoice.save()
    return JsonResponse({"invoice": pk, "status": "paid"})


class Refund(LockedViewMixin, View):
    lock_name = "invoice:{pk}"  # the same lock: a refund never runs during a payment
    lock_ttl = 30
    lock_status_code = 423  # 423 Locked at once (lock_timeout = 0, the default)

    def post(self, request: HttpRequest, pk: int) -> JsonResponse:
        invoice = Invoice.objects.get(pk=pk)
        self.lock.check()  # LockLost if the 30 s ran out: never refund unprotected
        invoice.paid = False
        invoice.save()
        return JsonResponse({"invoice": pk, "status": "refunded"})
