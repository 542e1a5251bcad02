"""Fixtures of the integration tests: ``api`` runs one test body against both APIs."""

from __future__ import annotations

import pytest

from tests.integration.apis import FLAVOURS, Api, api_for


@pytest.fixture(params=FLAVOURS)
def api(request: pytest.FixtureRequest) -> Api:
    """The sync API or the asyncio API (see ``tests/integration/apis.py``)."""
    flavour = request.param
    assert flavour in FLAVOURS
    return api_for(flavour)
