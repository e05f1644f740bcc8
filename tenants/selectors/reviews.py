"""A request as an approver sees it, and what an approval binds to.

The digest an approval binds to is the domain's rule, computed here and nowhere else
(`approval_digest`) from what the provisioner answers: the plan's digest and the part of the
GitOps change a request owns. Pages, the API and the approval services read it through
`review`; provisioning, checking that an approved plan has not moved, calls
`approval_digest` with what it rendered itself.

The approval queue shows each row's digest as last reviewed (`queue_reviews`), kept a while
in the cache, rather than rendering fifty plans and reading their repositories on every
view: approving compares it with the plan as it renders then (the approval services call
`review`, which keeps what it finds), so a digest that went stale is refused, never
approved, and the queue shows the new one after that.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from django.core.cache import cache

from tenants import provisioner
from tenants.errors import PlanUnavailable, PreviewUnavailable
from tenants.models import Project, Request
from tenants.provisioner import PLANNED_STATES, PlanView
from tenants.repository_readers import unreadable

# What an approval binds to when the tenant's repository could not be read.
UNREADABLE_REPOSITORY = "(the repository could not be read)"


def approval_digest(plan_digest: str, gitops_binds: str | None) -> str:
    """What an approval binds to: the plan's objects and the change to the tenant's
    repository (GitOpsChange.binds), as the approver saw them. None: the repository could
    not be read, and approving binds to that (once it can be read, the request comes back
    for approval); a rule approving on its own binds to that too (it reads no repository)."""
    change = UNREADABLE_REPOSITORY if gitops_binds is None else gitops_binds
    return hashlib.sha256(f"{plan_digest}\n{change}".encode()).hexdigest()


@dataclass(frozen=True)
class Review:
    """A request as an approver sees it: the plan, the GitOps change, and the digest
    approving binds to ("" when there is no plan to approve)."""

    plan: PlanView | None = None
    plan_error: str = ""
    gitops_diff: str = ""
    gitops_error: str = ""
    digest: str = ""
    # The request's GitOps engines that cannot read the tenant's repository URL, one line
    # each (tenants.repository_readers): said before approval, not found at provisioning.
    repository_warnings: tuple[str, ...] = ()


def repository_warnings(tenancy_request: Request) -> tuple[str, ...]:
    """What the GitOps engines this request writes for (its project's, or the tenant's)
    cannot read of the tenant's repository URL."""
    tenant, payload = tenancy_request.tenant, tenancy_request.payload or {}
    engine_name = payload.get("engine")
    if not engine_name and payload.get("project"):
        engine_name = (
            Project.objects.filter(tenant=tenant, name=payload["project"])
            .values_list("gitops_engine", flat=True)
            .first()
        )
    return tuple(unreadable(engine_name or tenant.gitops_engine, tenant.gitops_repo_url))


def review(tenancy_request: Request) -> Review:
    """Renders the plan and reads the tenant's repository for the GitOps diff; keeps the
    digest (or why there is none) for the queue."""
    if tenancy_request.state not in PLANNED_STATES:
        return Review()
    found = _review(tenancy_request)
    if tenancy_request.pk is None or tenancy_request.created_at is None:
        return found  # not saved: no queue shows it
    cache.set(
        _kept_key(tenancy_request),
        {"digest": found.digest, "plan_error": found.plan_error},
        REVIEW_KEPT_SECONDS,
    )
    return found


# How long the queue shows a digest as last reviewed before reviewing the request again.
REVIEW_KEPT_SECONDS = 15 * 60


def _kept_key(tenancy_request: Request) -> str:
    # With the moment it was made: an id handed out again (a database restored from a
    # backup) is another request.
    return f"review:{tenancy_request.pk}:{tenancy_request.created_at.timestamp()}"


@dataclass(frozen=True)
class QueueReview:
    """What a queue row shows of its plan: the digest approving it binds to ("" when
    there is no plan to approve, and `plan_error` says why)."""

    digest: str = ""
    plan_error: str = ""


def queue_reviews(requests: list[Request]) -> dict[int, QueueReview]:
    """Request id -> its digest as last reviewed, for a page of the queue: one cache read
    for the page; only requests not reviewed lately are reviewed now (each tenant's
    repository read once for them all). Approving compares the digest with the current
    plan, so one kept from before a plan moved is refused, not approved."""
    keys = {_kept_key(each): each for each in requests}
    kept = cache.get_many(list(keys))
    found = {keys[key].pk: QueueReview(**value) for key, value in kept.items()}
    unseen = [each for key, each in keys.items() if key not in kept]
    if unseen:
        with provisioner.one_read_per_repository():
            for each in unseen:
                fresh = review(each)
                found[each.pk] = QueueReview(digest=fresh.digest, plan_error=fresh.plan_error)
    return found


def _review(tenancy_request: Request) -> Review:
    warnings = repository_warnings(tenancy_request)
    try:
        planned = provisioner.plan(tenancy_request)
    except PlanUnavailable as exc:
        return Review(plan_error=str(exc), repository_warnings=warnings)
    try:
        change = provisioner.gitops_preview(tenancy_request)
    except PreviewUnavailable as exc:
        return Review(
            plan=planned,
            gitops_error=str(exc),
            digest=approval_digest(planned.digest, None),
            repository_warnings=warnings,
        )
    return Review(
        plan=planned,
        gitops_diff=change.diff,
        digest=approval_digest(planned.digest, change.binds),
        repository_warnings=warnings,
    )


def policy_digest(tenancy_request: Request) -> str:
    """What a rule approving on its own is bound to: the plan as it renders now (no
    repository read on the way in; the run compares the plan it renders with this one and
    sends a request whose plan moved back to approval, as it does for a person's)."""
    try:
        return approval_digest(provisioner.plan(tenancy_request).digest, None)
    except PlanUnavailable:
        return ""  # the run fails it, saying what is gone
