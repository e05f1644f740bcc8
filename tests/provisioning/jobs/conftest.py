# The engine's own world, for the test_engine_*.py modules: the Kubernetes API stand-in with
# the demo seeded onto it and no GitOps repository, so a run's last step (the commit) is
# skipped. The folder's `world` and `sandbox` stay the GitOps loop's (tests/provisioning/
# conftest.py); a module provisioning without GitOps names these as its `world` and `sandbox`.
import pytest

from kubesandbox import DEFAULT_NAMESPACES, KubeSandbox
from kubesandbox.testing import upstream_crds
from portal.sandbox import PLATFORM_NAMESPACES
from tenants.models import Cluster, Tenant, User
from tests.support.cluster import seed_demo


@pytest.fixture
def engine_sandbox():
    namespaces = (*DEFAULT_NAMESPACES, *PLATFORM_NAMESPACES)
    with KubeSandbox(
        termination_seconds=0.2, namespaces=namespaces, crds=upstream_crds()
    ) as running:
        yield running


@pytest.fixture
def engine_world(db, engine_sandbox):
    seed_demo(engine_sandbox)
    return {
        "tenant": Tenant.objects.get(slug="payments"),
        "developer": User.objects.get(username="dev"),
        "admin": User.objects.get(username="pat"),
        "cluster": Cluster.objects.get(name="sandbox"),
    }
