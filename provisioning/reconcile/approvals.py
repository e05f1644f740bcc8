"""What an approval is bound to: the digest of the plan and of the GitOps change a person
saw (a rule binds to the plan alone), and the GitOps part a person approving now would bind to."""

from __future__ import annotations

from dataclasses import dataclass

from provisioning.gitops import GitError
from provisioning.plan import PlanInput
from provisioning.reconcile.proposals import gitops_preview
from tenants.choices import Decision
from tenants.models import Approval, Request


def gitops_binds_now(tenancy_request: Request, inputs: PlanInput | None = None) -> str | None:
    """The part of the GitOps change a person approving now would bind to, read from the
    tenant's repository (None: it holds nothing readable; tenants.selectors.approval_digest)."""
    try:
        return gitops_preview(tenancy_request, inputs).binds
    except GitError as error:
        if error.transient:
            raise  # not readable now says nothing about what it holds: wait, do not re-ask
        return None


def approved_digest(tenancy_request: Request) -> str:
    bound = approved_digests([tenancy_request.pk]).get(tenancy_request.pk)
    return bound.digest if bound else ""


@dataclass(frozen=True)
class Bound:
    """The digest an approval is bound to, and whether a rule gave it (bound to the plan
    alone: a rule reads no repository) or a person who saw the plan and the GitOps diff."""

    digest: str
    by_policy: bool


def approved_digests(request_ids: list[int]) -> dict[int, Bound]:
    """Request id -> what its latest approval is bound to (none: approved before Berth
    bound approvals to digests)."""
    latest: dict[int, Bound] = {}
    for request_id, digest, approver in (
        Approval.objects.filter(request_id__in=request_ids, decision=Decision.APPROVE)
        .order_by("request_id", "-created_at", "-id")
        .values_list("request_id", "plan_digest", "approver_id")
    ):
        if request_id not in latest and digest:
            latest[request_id] = Bound(digest, by_policy=approver is None)
    return latest
