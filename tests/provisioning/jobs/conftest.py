# The engine's own world, for the test_engine_*.py modules: the Kubernetes API stand-in with
# the demo seeded onto it and no GitOps repository, so a run's last step (the commit) is
# skipped. The folder's `sandbox` is the GitOps loop's (tests/provisioning/conftest.py); a
# module provisioning without GitOps takes `engine_world` and `engine_sandbox`.
import pytest

from tenants.models import Cluster
from tests.support.cluster import seed_demo, shared_stand_in
from tests.support.prov_world import demo_people
from tests.support.snapshots import built_once


@pytest.fixture
def engine_sandbox():
    """The engine's stand-in: one per test process, a fresh cluster for each test."""
    return shared_stand_in(termination_seconds=0.2)


@pytest.fixture
def engine_world(db, engine_sandbox):
    built_once(
        ("engine", engine_sandbox.url), lambda: seed_demo(engine_sandbox), sandbox=engine_sandbox
    )
    return {**demo_people(), "cluster": Cluster.objects.get(name="sandbox")}


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
