"""Fixtures of the guardrails' tests."""

import pytest

from tests.support.guardrails_admission import BOOTSTRAP, live_cluster


@pytest.fixture(scope="module")
def cluster():
    """The admission tests' API server, holding Berth's bootstrap (roles, policies and their
    bindings) and the tenants' namespaces and parameters (tests.support.guardrails_admission).
    A module that needs another cluster defines its own `cluster`."""
    live = live_cluster(BOOTSTRAP)
    yield live
    live.close()
