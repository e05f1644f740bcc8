import pytest

from tests.support.authz import LiveCluster
from tests.support.helm_chart import RBAC_KINDS, VALUES_FILES, check_chart, values
from tests.support.make_run import make_run_answering  # noqa: F401 - a fixture


@pytest.fixture
def ask():
    """An API server holding a rendering's RBAC (what `helm install -n berth` would make):
    ask it what Berth may do, as `kubectl auth can-i --as` would."""
    started = []

    def holding(rendered: list[dict]) -> LiveCluster:
        objects = []
        for obj in rendered:
            if obj["kind"] in RBAC_KINDS:
                if obj["kind"] in {"ServiceAccount", "Role", "RoleBinding"}:
                    obj = {
                        **obj,
                        "metadata": {"namespace": check_chart.NAMESPACE, **obj["metadata"]},
                    }
                objects.append(obj)
        started.append(LiveCluster(objects, namespaces=(check_chart.NAMESPACE, "argocd")))
        return started[-1]

    yield holding
    for cluster in started:
        cluster.close()


@pytest.fixture(scope="module", params=sorted(VALUES_FILES))
def rendered(request) -> list[dict]:
    """The chart rendered with each of its CI values files (deploy/helm/berth/ci)."""
    return check_chart.render(values(request.param))
