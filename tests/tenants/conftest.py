"""Fixtures that several modules of tests/tenants/ share.

Each world is named for what it is (`names_world` here; `demo_world` and `api_world` in
tests/conftest.py), so none replaces another in the folders below."""

from http.server import ThreadingHTTPServer

import pytest

from tenants.models import Cluster, ClusterPrice
from tests.support.backstage import with_estate
from tests.support.prometheus import prometheus_stand_in
from tests.support.servers import serving
from tests.support.tenants_notifications import Receiver
from tests.support.tenants_showback import PRICES


@pytest.fixture
def names_world(demo_world) -> dict:
    """The demo world (tests/conftest.py) and its sandbox cluster, as the tests of the
    namespace-name registry (test_name_*.py) know it."""
    return {**demo_world, "cluster": Cluster.objects.get(name="sandbox")}


@pytest.fixture
def backstage_estate(api_world):
    """The API demo with what Backstage's catalog shows (tests/support/backstage.py)."""
    return with_estate(api_world)


@pytest.fixture
def receiver():
    Receiver.deliveries, Receiver.failures = [], 0
    with serving(ThreadingHTTPServer(("127.0.0.1", 0), Receiver)) as server:
        yield f"http://127.0.0.1:{server.server_address[1]}/hooks/berth"


@pytest.fixture
def priced(api_world):
    """The sandbox cluster with prices (tests/support/tenants_showback.py's PRICES)."""
    cluster = Cluster.objects.get(name="sandbox")
    ClusterPrice.objects.create(cluster=cluster, **PRICES)
    return cluster


@pytest.fixture
def prometheus():
    """A Prometheus stand-in on loopback (tests/support/prometheus.py) in which
    payments-shop-dev uses a quarter of a core and 1.5 GiB at any time; a test changes
    `series` to say otherwise."""
    with prometheus_stand_in({"payments-shop-dev": {"cpu": 0.25, "memory": 1.5}}) as stand_in:
        yield stand_in
