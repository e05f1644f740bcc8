# The engine's own world, for the test_engine_*.py modules: the Kubernetes API stand-in with
# the demo seeded onto it and no GitOps repository, so a run's last step (the commit) is
# skipped. The folder's `sandbox` is the GitOps loop's (tests/provisioning/conftest.py); a
# module provisioning without GitOps takes `engine_world` and `engine_sandbox`.
import pytest

from tenants.models import Cluster
from tests.support.cluster import stand_in
from tests.support.prov_world import demo_world


@pytest.fixture
def engine_sandbox():
    with stand_in(termination_seconds=0.2) as running:
        yield running


@pytest.fixture
def engine_world(db, engine_sandbox):
    return {**demo_world(engine_sandbox), "cluster": Cluster.objects.get(name="sandbox")}


@pytest.fixture
def newer_templates(gitops_world, monkeypatch):
    """The `shop` project provisioned on dev, then Berth's templates changed as a newer
    Berth's would be (its Argo CD Application annotated): a campaign has files to write."""
    from tests.support.gitops_loop import project, work
    from tests.support.jobs_campaigns import annotated, newer_applications

    project(gitops_world, "shop", "argocd", "dev")
    work()
    with newer_applications(monkeypatch, annotated):
        yield


# `sandbox` is the folder's stand-in (tests/provisioning/conftest.py).
@pytest.fixture
def ephemeral_world(db, sandbox, tmp_path, settings):
    from tests.support.ephemeral import ephemeral_world_on

    return ephemeral_world_on(sandbox, tmp_path, settings)
