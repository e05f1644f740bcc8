# The chart's least-privilege tests (test_chart_least_privilege_*.py): the chart rendered
# with its default values, and a Kubernetes API stand-in with Berth's identity from it
# installed (tests/support/security_chart.py). The egress tests (test_egress_*.py): the
# production default of no network beyond the public internet, and a platform admin's API.
# The exact-ownership tests (test_exact_ownership.py) provision through the GitOps loop's
# world (tests/support/gitops_loop.py).
# The forge answers tests (test_forge_answers.py): merge-request mode's world
# (tests/provisioning/pull_requests/conftest.py).
# The git injection tests (test_git_injection_*.py, which use production_git throughout):
# git as in production, and the mark a hostile value would leave.
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kubesandbox import DEFAULT_NAMESPACES, KubeSandbox
from kubesandbox.testing import upstream_crds
from tests.provisioning.pull_requests.conftest import (  # noqa: F401 - fixtures
    forge,
    forge_world,
    github_openapi,
    hook_receiver,
    hooked,
)
from tests.support.gitops_loop import (  # noqa: F401 - fixtures
    gitops_world,
    loop_repositories,
    loop_server,
    sandbox,
    server,
)
from tests.support.hibernation import KUBE_GREEN
from tests.support.prov_repository_check import admin_api, queued  # noqa: F401 - fixtures
from tests.support.security_chart import (
    ARGOCD_NAMESPACE,
    BERTH_KINDS,
    FLUX_NAMESPACE,
    RELEASE_NAMESPACE,
    Cluster,
    check_chart,
)


@pytest.fixture(scope="module")
def chart() -> list[dict[str, Any]]:
    try:
        values = check_chart.load_values(check_chart.CHART / "ci" / "default-values.yaml")
        return check_chart.render(values)
    except check_chart.HelmUnavailable as exc:
        pytest.skip(f"cannot render the Helm chart: {exc}")


@pytest.fixture
def cluster(chart: list[dict[str, Any]]) -> Iterator[Cluster]:
    with KubeSandbox(
        token="admin-token",
        # kube-green's too where it is beside the checkout: plans hold a SleepInfo then.
        crds=[*upstream_crds(), *([KUBE_GREEN] if KUBE_GREEN.is_dir() else [])],
        namespaces=(*DEFAULT_NAMESPACES, RELEASE_NAMESPACE, ARGOCD_NAMESPACE, FLUX_NAMESPACE),
    ) as stand_in:
        live = Cluster(stand_in)
        # What `helm install -n berth` makes of Berth's identity, through the API as its admin.
        for obj in sorted(
            (o for o in chart if o["kind"] in BERTH_KINDS),
            key=lambda o: o["kind"].startswith("ValidatingAdmissionPolicy"),
        ):
            meta = obj["metadata"]
            if obj["kind"] in {"ServiceAccount", "Role", "RoleBinding"}:
                obj = {**obj, "metadata": {"namespace": RELEASE_NAMESPACE, **meta}}
            live.as_admin(obj)
        live.berth = Cluster._session(stand_in.service_account_token(RELEASE_NAMESPACE, "berth"))
        yield live


@pytest.fixture
def no_loopback(settings):
    """Production's default: no network allowed beyond the public internet."""
    settings.BERTH_EGRESS_ALLOW = []


@pytest.fixture
def production_git(settings, tmp_path):
    """Insecure transports off, as in production; git's HOME in this test's data dir."""
    settings.BERTH_GIT_ALLOW_INSECURE = False
    settings.DATA_DIR = tmp_path
    settings.BERTH_GIT_MAX_ATTEMPTS = 1
    return settings


@pytest.fixture
def marker(tmp_path) -> Path:
    """Where a hostile value run by a shell would leave its mark (tests/support/security_git.py)."""
    return tmp_path / "gitops" / "home.pwned"
