"""Requests a person may see, their history, what they may do with one, and the approval
queue."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import OuterRef, Q, QuerySet, Subquery
from django.shortcuts import get_object_or_404

from tenants.choices import (
    ApproverRole,
    Decision,
    EnvironmentState,
    NamePurpose,
    RequestState,
    Role,
)
from tenants.models import (
    Approval,
    AuditEvent,
    EphemeralEnvironment,
    Membership,
    Namespace,
    NamespaceClaim,
    Request,
    Tenant,
    User,
)
from tenants.selectors.rights import is_platform_admin, why_cannot_decide


def requests_visible_to(user: User) -> QuerySet[Request]:
    requests = Request.objects.select_related("tenant", "requester")
    if is_platform_admin(user):
        return requests
    # Their tenants' requests, and their own asked of another tenant (access).
    mine = Membership.objects.filter(user=user).values("tenant_id")
    return requests.filter(Q(tenant_id__in=mine) | Q(requester=user))


# What a list of requests shows of each: its own columns, then (as `tenant_slug` and
# `requester_name`) its tenant's slug and its requester's username.
LISTED_COLUMNS = (
    "id",
    "kind",
    "state",
    "status_message",
    "payload",
    "policy_rule",
    "approvals_required",
    "approver_role",
    "waiting_since",
    "next_try_at",
    "wait_reason",
    "conditions",
    "created_at",
    "updated_at",
)


def request_rows_visible_to(user: User) -> QuerySet:
    """requests_visible_to as rows (dicts of LISTED_COLUMNS, tenant_slug, requester_name),
    not model instances: a page of instances built three per row (request, tenant,
    requester) and took 40 % of the list's time (docs/benchmarks.md). The slug and the name
    are subqueries, not joins, so the page's COUNT, which leaves unused subqueries out,
    reads the requests alone."""
    return (
        requests_visible_to(user)
        .annotate(
            tenant_slug=Subquery(Tenant.objects.filter(pk=OuterRef("tenant_id")).values("slug")),
            requester_name=Subquery(
                User.objects.filter(pk=OuterRef("requester_id")).values("username")
            ),
        )
        .values(*LISTED_COLUMNS, "tenant_slug", "requester_name")
    )


def visible_request(user: User, pk: int) -> Request:
    """One request, or 404 — never a hint that another tenant's request exists."""
    return get_object_or_404(requests_visible_to(user).select_related("pull_request"), pk=pk)


# The states a request can still leave by itself (a worker, a decision, the forge): its page
# keeps asking for news while it is in one. Ready, failed, rejected, cancelled, returned and
# decommissioned change only when someone acts on the page or elsewhere.
MOVING_STATES = frozenset(
    {
        RequestState.SUBMITTED,
        RequestState.APPROVED,
        RequestState.PROVISIONING,
        RequestState.DECOMMISSIONING,
        RequestState.AWAITING_MERGE,  # the forge's webhook, or the polling, moves it
    }
)

# The states each action starts from: the services' transitions (tested to agree).
DECIDABLE_STATES = frozenset({RequestState.SUBMITTED})
CANCELLABLE_STATES = frozenset({RequestState.SUBMITTED})
RETRYABLE_STATES = frozenset({RequestState.FAILED})


@dataclass(frozen=True)
class RequestActions:
    """What a person may do with a request now: what its page offers and the API reports."""

    decide: bool = False
    cancel: bool = False
    retry: bool = False

    @property
    def key(self) -> str:
        """The offer in a word or three ("decide cancel"): a page keeps its open forms (and
        what was typed into them) while its poll answers with the same key."""
        return " ".join(name for name in ("decide", "cancel", "retry") if getattr(self, name))

    @property
    def permissions(self) -> dict[str, bool]:
        """The same answer as the API reports it (a request's `permissions`)."""
        return {"may_decide": self.decide, "may_cancel": self.cancel, "may_retry": self.retry}


def may_cancel(user: User, tenancy_request: Request) -> bool:
    """Its requester or a platform admin (the transition table says from which states)."""
    return tenancy_request.requester_id == user.pk or is_platform_admin(user)


def environment_ended(tenancy_request: Request) -> bool:
    """Its ephemeral environment is ending or ended: a failed request has nothing to retry."""
    return EphemeralEnvironment.objects.filter(
        request=tenancy_request, state__in=(EnvironmentState.ENDING, EnvironmentState.ENDED)
    ).exists()


def request_actions(
    user: User, tenancy_request: Request, *, plan_digest: str | None = None
) -> RequestActions:
    """The one answer to "what may this person do with this request", asked by the page,
    its poll and the API; the services ask the same rules (why_cannot_decide, may_cancel,
    environment_ended), so nothing is offered that they would refuse. Anyone who may see
    a request may comment on it.
    `plan_digest`: the plan the person is shown; approving it again is not offered."""
    state = tenancy_request.state
    decide = (
        state in DECIDABLE_STATES
        and why_cannot_decide(user, tenancy_request) is None
        and not (
            plan_digest
            and Approval.objects.filter(
                request=tenancy_request,
                approver=user,
                decision=Decision.APPROVE,
                plan_digest=plan_digest,
            ).exists()
        )
    )
    cancel = state in CANCELLABLE_STATES and may_cancel(user, tenancy_request)
    retry = (
        state in RETRYABLE_STATES
        and is_platform_admin(user)
        and not environment_ended(tenancy_request)
    )
    return RequestActions(decide=decide, cancel=cancel, retry=retry)


def request_history(tenancy_request: Request) -> QuerySet[AuditEvent]:
    return AuditEvent.objects.filter(
        object_type=Request._meta.label_lower, object_id=str(tenancy_request.pk)
    ).order_by("created_at", "id")


def namespaces_of_request(tenancy_request: Request) -> list[Namespace]:
    """The namespaces a request created, in promotion order (dev before prod), or the one it
    changes or removes."""
    namespaces = Namespace.objects.select_related("project").order_by(
        "tier__position", "tier__slug", "name"
    )
    target = (tenancy_request.payload or {}).get("namespace")
    made = list(namespaces.filter(request=tenancy_request))
    if target and not made:
        made = list(namespaces.filter(tenant_id=tenancy_request.tenant_id, name=target)[:1])
    return made


def kargo_namespace_of_request(tenancy_request: Request) -> str:
    """The Kargo project namespace a project request claimed beside its tiers', or ""."""
    return (
        NamespaceClaim.objects.filter(
            request=tenancy_request,
            purpose=NamePurpose.KARGO,
        )
        .order_by("-created_at")
        .values_list("name", flat=True)
        .first()
        or ""
    )


def commits_of_request(tenancy_request: Request) -> QuerySet:
    """What Berth pushed to the tenant's repository for this request, newest first."""
    return tenancy_request.git_commits.order_by("-created_at", "-id")


def decidable_by(user: User) -> QuerySet[Request]:
    """The approval queue: requests awaiting a decision this user may make, oldest first."""
    pending = (
        Request.objects.filter(state=RequestState.SUBMITTED)
        .exclude(requester=user)
        .select_related("tenant", "requester")
        .order_by("created_at", "id")
    )
    if is_platform_admin(user):
        return pending
    owned = Membership.objects.filter(user=user, role=Role.OWNER).values("tenant_id")
    return pending.filter(approver_role=ApproverRole.TENANT_OWNER, tenant_id__in=owned)
