"""What people are told when a request moves, an environment is about to expire or a tenant
passes a share of its budget: who hears (e-mail to those who must act or asked) and what
the tenant's signed JSON webhook carries.

Composing only: tenants.receivers decides when, tenants.tasks sends (retried there)."""

from __future__ import annotations

from datetime import date

from django.conf import settings

from tenants.choices import ApproverRole, BudgetMeasure, Role
from tenants.kinds import kind_for
from tenants.models import AuditEvent, EphemeralEnvironment, Membership, Request, Tenant, User
from tenants.quantities import payload_for_people
from tenants.selectors.budget_alerts import Reading

# Every move of a request someone waits on: the transition's action → the event's name.
# (Starting to provision is not one: people wait for its end, ready or failed.)
EVENTS = {
    "submit": "submitted",
    "approve": "approved",
    "reject": "rejected",
    "cancel": "cancelled",
    "return_to_approval": "returned",
    "retry": "retried",
    "mark_ready": "ready",
    "mark_failed": "failed",
    "start_decommission": "decommissioning",
    "mark_decommissioned": "decommissioned",
    "return_unmerged": "unmerged",
}
ACTIONS = {event: action for action, event in EVENTS.items()}

# What each event says of the request, in a subject line, and on the opt-out page.
EVENT_LABELS = {
    "submitted": "submitted",
    "approved": "approved",
    "rejected": "rejected",
    "cancelled": "cancelled",
    "returned": "back awaiting approval: its plan changed",
    "retried": "being provisioned again",
    "ready": "ready",
    "failed": "failed",
    "decommissioning": "being decommissioned",
    "decommissioned": "decommissioned",
    "unmerged": "back with its requester: its pull request was closed unmerged",
}
# What each event says of the request in a sentence: "Request #4 (new namespace) for search
# failed.", not "is failed".
EVENT_SENTENCES = {
    "submitted": "awaits approval",
    "approved": "was approved",
    "rejected": "was rejected",
    "cancelled": "was cancelled",
    "returned": "is back awaiting approval: its plan changed",
    "retried": "is being provisioned again",
    "ready": "is ready",
    "failed": "failed",
    "decommissioning": "is being decommissioned",
    "decommissioned": "was decommissioned",
    "unmerged": "came back: its pull request was closed without merging",
}
EVENT_CHOICES = [
    ("submitted", "A request waits for my decision"),
    ("approved", "My request was approved"),
    ("rejected", "My request was rejected"),
    ("cancelled", "A request I asked for or was to decide was cancelled"),
    ("returned", "A request went back to approval because its plan changed"),
    ("retried", "Provisioning of my request was retried"),
    ("ready", "My request is ready"),
    ("failed", "My request failed"),
    ("decommissioning", "What my request made is being decommissioned"),
    ("decommissioned", "What my request made is gone"),
    ("unmerged", "My request's pull request was closed without merging"),
    ("expiring", "An ephemeral environment I may extend expires soon"),
]

# Events whose news is for those who decide, as well as for the requester.
FOR_DECIDERS = {"returned", "cancelled"}


def _deciders(tenancy_request: Request):
    deciders = User.objects.filter(is_platform_admin=True)
    if tenancy_request.approver_role == ApproverRole.TENANT_OWNER:
        owners = Membership.objects.filter(tenant=tenancy_request.tenant, role=Role.OWNER).values(
            "user_id"
        )
        deciders = deciders | User.objects.filter(pk__in=owners)
    return deciders.exclude(pk=tenancy_request.requester_id)


def actors_of(request_ids: list[int], event: str) -> dict[int, int | None]:
    """Who made this move, per request (its last audit event of it): they need no e-mail
    about what they just did."""
    actors: dict[int, int | None] = {}
    for object_id, actor_id in (
        AuditEvent.objects.filter(
            object_type=Request._meta.label_lower,
            object_id__in=[str(pk) for pk in request_ids],
            action=f"request.{ACTIONS[event]}",
        )
        .order_by("object_id", "-created_at", "-id")
        .values_list("object_id", "actor_id")
    ):
        actors.setdefault(int(object_id), actor_id)
    return actors


def recipients(
    tenancy_request: Request, event: str, *, actors: dict[int, int | None] | None = None
) -> list[str]:
    """Who hears about it: approvers when it waits for them, the requester when it moves on,
    both when it is withdrawn or comes back; never the person who made the move, nor anyone
    who muted the event; and always the tenant's own notification addresses. `actors`: who
    made the move, by request (`actors_of`), when already read."""
    if event == "submitted":
        # Only a request held for a decision is news; one approved by policy is told as
        # "approved", and its requester knows they submitted it.
        people = list(_deciders(tenancy_request)) if tenancy_request.state == "submitted" else []
    else:
        people = [tenancy_request.requester]
        if event in FOR_DECIDERS:
            people += list(_deciders(tenancy_request))
    if actors is None:
        actors = actors_of([tenancy_request.pk], event)
    return _addresses(
        people, tenancy_request.tenant, event=event, actor_id=actors.get(tenancy_request.pk)
    )


def event_body(tenancy_request: Request, event: str) -> dict:
    return {
        "event": f"request.{event}",
        "request": {
            "id": tenancy_request.pk,
            "tenant": tenancy_request.tenant.slug,
            "kind": tenancy_request.kind,
            "state": tenancy_request.state,
            "payload": tenancy_request.payload,
            "requester": tenancy_request.requester.username,
            "message": tenancy_request.status_message,
            "url": f"{settings.BERTH_BASE_URL}/requests/{tenancy_request.pk}/",
        },
    }


def email_text(tenancy_request: Request, event: str) -> tuple[str, str]:
    """Subject and body: what happened, what was asked for as people read it, the link."""
    body = event_body(tenancy_request, event)["request"]
    label = EVENT_LABELS[event]
    lines = [
        f"Request #{body['id']} ({tenancy_request.get_kind_display().lower()}) for "
        f"{body['tenant']} {EVENT_SENTENCES[event]}.",
        "",
        *(f"{key}: {value}" for key, value in payload_for_people(body["payload"]).items()),
        "",
        *([body["message"], ""] if body["message"] else []),
        body["url"],
    ]
    return f"[Berth] {body['tenant']}: request #{body['id']} {label}", "\n".join(lines)


# Review apps come and go by the dozen, started by CI (which has the API's answer) and ended
# by expiry: people hear only when one waits for them or is withdrawn, is ready, or failed.
QUIET_KIND_EVENTS = {"returned", "cancelled", "ready", "failed"}


def wants_email(tenancy_request: Request, event: str) -> bool:
    if not kind_for(tenancy_request.kind).quiet:
        return True
    if event == "submitted":
        return tenancy_request.state == "submitted"  # held for a decision
    return event in QUIET_KIND_EVENTS


def environment_recipients(environment: EphemeralEnvironment) -> list[str]:
    """Who may extend it: its creator and the tenant's owners (unless they muted expiry
    warnings), plus the tenant's list."""
    owners = Membership.objects.filter(tenant=environment.tenant, role=Role.OWNER).values("user_id")
    people = [*User.objects.filter(pk__in=owners), environment.request.requester]
    return _addresses(people, environment.tenant, event="expiring")


def _addresses(
    people: list[User], tenant: Tenant, *, event: str, actor_id: int | None = None
) -> list[str]:
    """The addresses of these people, but the actor's and those of people who muted
    `event`, and the tenant's own list: each once, blanks dropped, sorted."""
    addresses = [
        person.email
        for person in people
        if person.pk != actor_id and event not in (person.muted_notifications or [])
    ]
    return sorted({a for a in [*addresses, *tenant.notify_emails] if a})


def environment_body(environment: EphemeralEnvironment, event: str) -> dict:
    return {
        "event": f"environment.{event}",
        "environment": {
            "id": environment.pk,
            "tenant": environment.tenant.slug,
            "project": environment.project.name,
            "env_slug": environment.slug,
            "namespace": environment.namespace.name,
            "expires_at": environment.expires_at.isoformat(),
            "max_expires_at": environment.max_expires_at.isoformat(),
            "url": f"{settings.BERTH_BASE_URL}/environments/{environment.pk}/",
        },
    }


# --- budget alerts: a tenant past 80 % or 100 % of its cost threshold or a quota budget ---


def budget_recipients(tenant: Tenant) -> list[str]:
    """The tenant's owners, who answer for what it spends, and its own list."""
    owners = Membership.objects.filter(tenant=tenant, role=Role.OWNER).values("user_id")
    return _addresses(list(User.objects.filter(pk__in=owners)), tenant, event="budget")


def budget_body(reading: Reading, percent: int, *, month: date) -> dict:
    """The webhook's event: which measure passed which share, its figures as decimal strings
    in `unit` (the currency, or millicores, MiB, GiB, namespaces), and the month."""
    return {
        "event": "budget.threshold",
        "budget": {
            "tenant": reading.tenant.slug,
            "month": f"{month:%Y-%m}",
            "measure": reading.measure,
            "percent": percent,
            "share": reading.share,
            "amount": str(reading.amount),
            "limit": str(reading.limit),
            "unit": reading.unit,
            "detail": reading.detail,
            "url": f"{settings.BERTH_BASE_URL}/tenants/{reading.tenant.slug}/#budget-alerts",
        },
    }


def budget_email_text(body: dict) -> tuple[str, str]:
    """Subject and text of a budget alert, from its webhook event."""
    alert = body["budget"]
    measure = BudgetMeasure(alert["measure"])
    if measure == BudgetMeasure.COST:
        subject = f"the month's cost passed {alert['percent']} % of its threshold"
        of_what = "monthly cost alert"
        why = (
            "Its owners set the threshold on the tenant's page, where the cost of each "
            "namespace is shown."
        )
    else:
        subject = f"{alert['percent']} % of its {measure.label} in use"
        of_what = measure.label
        why = "A request that would go past the budget is refused; platform admins set it."
    month = date.fromisoformat(f"{alert['month']}-01")
    lines = [
        f"{alert['tenant']} reached {alert['share']} % of its {of_what} in {month:%B %Y}: "
        f"{alert['detail']}.",
        why,
        "Berth tells this once a month at 80 % and once at 100 %.",
        "",
        alert["url"],
    ]
    return f"[Berth] {alert['tenant']}: {subject}", "\n".join(lines)
