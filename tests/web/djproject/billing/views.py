"""Views of the test project: a read-modify-write on a row, with and without the lock."""

from __future__ import annotations

import threading
import time

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import View

from quorumlock.django import LockedViewMixin, locked
from tests.web.djproject.billing.models import Invoice

# How many requests were inside a bump at once, at most (reset by the tests).
inside = {"now": 0, "most": 0}
_inside_guard = threading.Lock()


def _bump(pk: int) -> int:
    with _inside_guard:
        inside["now"] += 1
        inside["most"] = max(inside["most"], inside["now"])
    try:
        invoice, _ = Invoice.objects.get_or_create(pk=pk)
        count = invoice.count
        time.sleep(0.005)  # another request would read the same count here
        invoice.count = count + 1
        invoice.save()
        return int(invoice.count)
    finally:
        with _inside_guard:
            inside["now"] -= 1


@locked("invoice:{pk}", ttl=10, timeout=30)
def bump(request: HttpRequest, pk: int) -> HttpResponse:
    return HttpResponse(str(_bump(pk)))


def bump_unlocked(request: HttpRequest, pk: int) -> HttpResponse:
    return HttpResponse(str(_bump(pk)))


@locked("invoice:{pk}", ttl=0.5)
def slow(request: HttpRequest, pk: int) -> HttpResponse:
    time.sleep(1.0)  # twice the ttl, not renewed: the lock is gone when it returns
    return HttpResponse("done")


@locked("search:{q}", ttl=5, status_code=423)
def search(request: HttpRequest) -> HttpResponse:
    return HttpResponse("searched " + request.GET["q"])


class InvoiceView(LockedViewMixin, View):
    lock_name = "invoice:{pk}"
    lock_ttl = 10
    lock_methods = frozenset({"post"})

    def get(self, request: HttpRequest, pk: int) -> HttpResponse:
        return HttpResponse("read")

    def post(self, request: HttpRequest, pk: int) -> JsonResponse:
        return JsonResponse({"lock": self.lock.name, "validity": self.lock.check()})


class CheckingView(LockedViewMixin, View):
    lock_name = "checking:{pk}"
    lock_ttl = 0.5

    def post(self, request: HttpRequest, pk: int) -> HttpResponse:
        time.sleep(1.0)  # twice the ttl, not renewed
        checked.append("slept")
        self.lock.check()  # raises LockLost: answered 503
        checked.append("checked")
        return HttpResponse("done")


checked: list[str] = []
