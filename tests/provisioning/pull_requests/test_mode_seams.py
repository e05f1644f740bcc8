"""Where merge-request mode meets the rest: a tier's setting wins over the tenant's (prod
reviewed while dev pushes directly, or the other way round), a decommission waits for its
merge before anything is deleted, and an upgrade campaign's commit for a tenant in the mode
goes through a pull request too."""

from __future__ import annotations

from tenants import services
from tenants.choices import CampaignState, NamespaceState, RequestKind, RequestState
from tenants.models import EnvironmentTier, Namespace, PullRequest, Request, Tenant
from tests.support.gitops_loop import approved_namespace, project, submit, work
from tests.support.gitserver import files_on
from tests.support.jobs_campaigns import annotated, newer_applications, roll
from tests.support.workflow import approve_if_needed

from .conftest import REPO, opened
from .test_merge_request_mode import converge


def merged(forge_world, tenancy_request: Request, number: int) -> Request:
    """Merged on the forge, noticed by polling, and the run done."""
    from provisioning.reconcile.pull_requests import poll_pull_requests

    forge_world["forge"].merge_as_reviewer(REPO, number, "rita")
    assert poll_pull_requests() == {tenancy_request.pk: "merged"}
    done = converge(tenancy_request)
    assert done.state == RequestState.READY, done.status_message
    return done


def test_prod_needs_a_pull_request_while_dev_pushes_directly(forge_world):
    Tenant.objects.filter(pk=forge_world["tenant"].pk).update(changes_by_pull_request=False)
    EnvironmentTier.objects.filter(slug="prod").update(changes_by_pull_request=True)

    approved_namespace(forge_world, "shop", "dev")
    (dev,) = work()
    approved_namespace(forge_world, "shop", "prod")
    (prod,) = work()

    assert dev.state == RequestState.READY and not PullRequest.objects.filter(request=dev)
    assert "apps/shop/dev/application.yaml" in files_on(forge_world["forge"].repo(REPO).git.path)
    assert prod.state == RequestState.AWAITING_MERGE
    assert PullRequest.objects.get(request=prod).number == 1


def test_a_tier_that_pushes_directly_wins_over_a_tenant_in_merge_request_mode(forge_world):
    EnvironmentTier.objects.filter(slug="dev").update(changes_by_pull_request=False)

    approved_namespace(forge_world, "shop", "dev")
    (dev,) = work()

    assert dev.state == RequestState.READY
    assert not PullRequest.objects.exists()


def test_a_decommission_waits_for_its_merge_before_anything_is_deleted(forge_world, sandbox):
    merged(forge_world, opened(forge_world), 1)
    removal = approve_if_needed(
        submit(forge_world, "decommission", namespace="payments-shop-dev", reason="moved on"),
        approver=forge_world["admin"],
    )
    (waiting,) = work()

    assert waiting.pk == removal.pk and waiting.state == RequestState.AWAITING_MERGE
    assert sandbox.get("Namespace", "payments-shop-dev")  # still there
    assert Namespace.objects.get(name="payments-shop-dev").state == NamespaceState.ACTIVE
    bare = forge_world["forge"].repo(REPO).git.path
    assert "apps/shop/dev/application.yaml" in files_on(bare)
    assert "apps/shop/dev/application.yaml" not in files_on(bare, f"berth/request-{removal.pk}")

    merged(forge_world, waiting, 2)

    assert Namespace.objects.get(name="payments-shop-dev").state == NamespaceState.DECOMMISSIONED
    assert "apps/shop/dev/application.yaml" not in files_on(bare)


def test_a_decommission_whose_pull_request_is_closed_leaves_the_namespace_as_it_was(
    forge_world, sandbox
):
    from provisioning.reconcile.pull_requests import poll_pull_requests

    merged(forge_world, opened(forge_world), 1)
    approve_if_needed(
        submit(forge_world, "decommission", namespace="payments-shop-dev", reason="moved on"),
        approver=forge_world["admin"],
    )
    (waiting,) = work()
    forge_world["forge"].close_as_reviewer(REPO, 2, "rita")

    assert poll_pull_requests() == {waiting.pk: "closed"}
    assert Request.objects.get(pk=waiting.pk).state == RequestState.RETURNED
    assert Namespace.objects.get(name="payments-shop-dev").state == NamespaceState.ACTIVE
    assert sandbox.get("Namespace", "payments-shop-dev")


def test_an_upgrade_campaign_s_commit_for_a_tenant_in_the_mode_goes_through_a_pull_request(
    forge_world, monkeypatch, django_capture_on_commit_callbacks
):
    (made,) = [project(forge_world, "shop", "argocd", "dev")]
    work()
    merged(forge_world, Request.objects.get(pk=made.pk), 1)
    with newer_applications(monkeypatch, annotated):
        campaign = services.create_campaign(
            actor=forge_world["admin"],
            tier=EnvironmentTier.objects.get(slug="dev"),
            reason="Annotated Applications.",
        )
        # Done once its pull request is merged and run, not before.
        assert roll(campaign) == CampaignState.ROLLING
        (commit,) = campaign.commits.all()
        assert commit.request.kind == RequestKind.TENANT_SYNC
        (filed,) = work()

        assert filed.state == RequestState.AWAITING_MERGE
        bare = forge_world["forge"].repo(REPO).git.path
        path = "apps/shop/dev/application.yaml"
        assert "berth.dev/new" not in files_on(bare)[path]
        assert "berth.dev/new" in files_on(bare, f"berth/request-{filed.pk}")[path]
        with django_capture_on_commit_callbacks(execute=True):
            merged(forge_world, filed, 2)
        assert "berth.dev/new" in files_on(bare)[path]
        assert roll(campaign) == CampaignState.DONE
