"""The demo's local repositories: a bare repository per tenant, made idempotently, that
the GitOps writer commits to over file://, driven by the provisioning engine against the
Kubernetes API stand-in."""

from __future__ import annotations

from tenants import demo
from tenants.models import Tenant
from tests.support.cluster import seed_demo
from tests.support.gitops_world import gitops_step
from tests.support.gitserver import commits_on, files_on
from tests.support.prov_world import demo_people
from tests.support.workflow import approved, converge


def test_demo_gets_a_local_bare_repo_per_tenant_idempotently(db, tmp_path):
    demo.seed(sandbox_api_url="http://127.0.0.1:9")
    Tenant.objects.filter(slug="search").update(gitops_repo_url="https://git.example.com/s.git")

    urls = demo.seed_git_repos(tmp_path / "git")
    again = demo.seed_git_repos(tmp_path / "git")

    assert urls == again
    assert urls["payments"] == (tmp_path / "git" / "payments.git").as_uri()
    assert Tenant.objects.get(slug="payments").gitops_repo_url == urls["payments"]
    # A repository someone configured is theirs.
    assert Tenant.objects.get(slug="search").gitops_repo_url == "https://git.example.com/s.git"
    for slug in ("payments", "search"):
        bare = tmp_path / "git" / f"{slug}.git"
        assert set(files_on(bare)) == {"README.md"}
        assert len(commits_on(bare)) == 1


def test_a_demo_file_repository_receives_the_files(db, writer_sandbox, fast_git, tmp_path):
    seed_demo(writer_sandbox)
    demo.seed_git_repos(tmp_path / "git")

    tenancy_request = converge(approved(demo_people()))

    assert gitops_step(tenancy_request)["outcome"] == "committed"
    assert "apps/shop/dev/application.yaml" in files_on(tmp_path / "git" / "payments.git")
