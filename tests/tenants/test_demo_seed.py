import pytest
from django.core.management import call_command

from tenants.choices import Role
from tenants.models import Cluster, EnvironmentTier, Membership, Tenant, User


def test_seed_creates_demo_world_and_running_it_twice_changes_nothing(db):
    models = (Tenant, User, Membership, EnvironmentTier, Cluster)
    call_command("seed_demo")
    counts = [model.objects.count() for model in models]

    call_command("seed_demo")

    assert [model.objects.count() for model in models] == counts
    assert set(EnvironmentTier.objects.values_list("slug", flat=True)) == {
        "dev",
        "staging",
        "prod",
        "review",
    }
    assert Cluster.objects.get().is_sandbox
    assert User.objects.get(username="pat").is_platform_admin
    assert Membership.objects.get(user__username="dev").tenant.slug == "payments"
    assert Membership.objects.get(user__username="olivia").role == Role.OWNER
    assert not User.objects.get(username="dev").has_usable_password()


# --- the demo's repositories: what `make run` gives each tenant -------------------------------


def test_the_seed_goes_through_the_tenants_own_checks(db):
    """The search tenant is Flux, whose GitRepository takes no file:// URL."""
    from django.core.exceptions import ValidationError

    from tenants import demo

    with pytest.raises(ValidationError) as refused:
        demo.seed(
            sandbox_api_url="http://127.0.0.1:9",
            repo_url_for={"search": "file:///srv/git/search.git"},
        )
    assert "gitops_repo_url" in refused.value.message_dict
    assert not Tenant.objects.exists()  # all or nothing


def test_an_earlier_demo_file_url_of_the_flux_tenant_is_replaced_by_the_git_servers(db, tmp_path):
    from tenants import demo

    demo.seed(sandbox_api_url="http://127.0.0.1:9")
    earlier = (tmp_path / "git" / "search.git").as_uri()  # what `make run` stored before
    Tenant.objects.filter(slug="search").update(gitops_repo_url=earlier)

    demo.seed(sandbox_api_url="http://127.0.0.1:9")
    urls = demo.seed_git_repos(tmp_path / "git", http_url="http://127.0.0.1:8002")

    assert urls["search"] == "http://127.0.0.1:8002/search.git"
    assert Tenant.objects.get(slug="search").gitops_repo_url == urls["search"]
    # Argo CD tenants too: their engines read no path on Berth's machine either.
    assert urls["payments"] == "http://127.0.0.1:8002/payments.git"


@pytest.mark.crds
def test_the_search_tenants_namespace_request_provisions_from_the_demo_git_server(db, tmp_path):
    """`make run`'s Flux tenant: its GitRepository passes the upstream Flux schema and the
    request reaches Ready, its commit pushed to the demo git server."""
    from portal.gitserver import GitHttpServer
    from provisioning import reconcile
    from tenants import demo
    from tenants.choices import RequestState
    from tests.support.cluster import seed_demo, stand_in
    from tests.support.gitserver import files_on
    from tests.support.workflow import approve_if_needed, ask_for_namespace

    git_dir = tmp_path / "git"
    git_dir.mkdir()
    with stand_in(termination_seconds=0.05) as sandbox, GitHttpServer(git_dir) as server:
        seed_demo(sandbox)
        demo.seed_git_repos(git_dir, http_url=server.base_url)
        search = Tenant.objects.get(slug="search")
        submitted = ask_for_namespace(search, User.objects.get(username="sam"), app="web")
        approved = approve_if_needed(submitted, approver=User.objects.get(username="pat"))

        reconcile.converge(request_id=approved.pk, worker="demo-test")

        approved.refresh_from_db()
        assert approved.state == RequestState.READY, approved.status_message
        source = [
            obj for obj in sandbox.objects("GitRepository") if obj["metadata"]["name"] == "search"
        ]
        assert [obj["spec"]["url"] for obj in source] == [server.url("search.git")]
        assert any(
            path.startswith("clusters/sandbox/flux/") for path in files_on(git_dir / "search.git")
        )
