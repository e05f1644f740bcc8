"""Helpers the tests of the browser's pages (tests/tenants/pages/) share: submitting and
deciding requests as the pages' users would, reading a request page's poll, and bringing a
request to each of its states."""

from provisioning import reconcile
from tenants import services
from tenants.choices import RequestState
from tenants.models import Request
from tenants.selectors import review
from tests.support.workflow import ask_for_namespace


def submit(world, *, tier="prod", app="shop", requester=None):
    return ask_for_namespace(world["tenant"], requester or world["developer"], app=app, tier=tier)


def approve(world, tenancy_request) -> Request:
    return services.approve_request(
        request_id=tenancy_request.pk,
        approver=world["admin"],
        plan_digest=review(tenancy_request).digest,
    )


def fragment(client, tenancy_request, digest: str = "") -> str:
    response = client.get(f"/requests/{tenancy_request.pk}/progress/", {"digest": digest})
    assert response.status_code == 200
    return response.content.decode()


def part(html: str, element_id: str) -> str:
    """The element of `html` with this id, as text from its start tag to the next part."""
    start = html.index(f'id="{element_id}"')
    ends = [
        html.find(f'id="{other}"', start + 1)
        for other in ("progress", "request-header", "request-actions", "history", "gitops")
    ]
    return html[start : min([end for end in ends if end > 0] or [len(html)])]


def to_approved(world, submitted, settings) -> Request:
    return approve(world, submitted)


def to_provisioning(world, submitted, settings) -> Request:
    settings.BERTH_OUTAGE_DEADLINE_SECONDS = 3600
    approve(world, submitted)
    reconcile.converge(request_id=submitted.pk, worker="w")  # the cluster does not answer: waits
    return submitted


def to_ready(world, submitted, settings) -> Request:
    approve(world, submitted)
    # As a worker leaves it (no cluster here to provision on).
    Request.objects.filter(pk=submitted.pk).update(state=RequestState.READY, status_message="")
    return submitted


def to_failed(world, submitted, settings) -> Request:
    settings.BERTH_OUTAGE_DEADLINE_SECONDS = 0  # the cluster does not answer: gives up
    approve(world, submitted)
    reconcile.converge(request_id=submitted.pk, worker="w")
    return submitted


def to_rejected(world, submitted, settings) -> Request:
    return services.reject_request(
        request_id=submitted.pk, approver=world["admin"], reason="Use the shared prod namespace."
    )


def to_cancelled(world, submitted, settings) -> Request:
    return services.cancel_request(request_id=submitted.pk, actor=world["developer"])


def to_decommissioned(world, submitted, settings) -> Request:
    approve(world, submitted)
    Request.objects.filter(pk=submitted.pk).update(state=RequestState.DECOMMISSIONED)
    return submitted
