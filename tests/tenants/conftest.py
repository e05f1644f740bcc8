"""Fixtures that several modules of tests/tenants/ share.

None is called `world`: tests/conftest.py's `world` is the REST API tests' (and
pages/conftest.py has the pages'), and one here would replace it in the folders below. A
module whose tests know one of these as `world` names it so in a fixture of its own."""

import pytest

from tenants.models import Cluster


@pytest.fixture
def names_world(demo_world) -> dict:
    """The demo world (tests/conftest.py) and its sandbox cluster, as the tests of the
    namespace-name registry (test_name_*.py) know it."""
    return {**demo_world, "cluster": Cluster.objects.get(name="sandbox")}
