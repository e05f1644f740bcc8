"""Tenant budgets: what a tenant's namespaces and pending requests use, and what fits.

Usage counts every namespace that is requested, being provisioned, live or being torn
down, plus the increases that pending quota changes ask for. Callers that admit a request
hold a lock on the tenant row, so concurrent requests cannot both take the last slice.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Q, Sum
from django.db.models.functions import Coalesce

from tenants import quantities
from tenants.choices import NamespaceState, RequestKind, RequestState
from tenants.errors import InvalidInput
from tenants.models import Namespace, Request, Tenant

COUNTED_STATES = (
    NamespaceState.REQUESTED,
    NamespaceState.PENDING,
    NamespaceState.ACTIVE,
    NamespaceState.DECOMMISSIONING,
)
PENDING_REQUEST_STATES = (
    RequestState.SUBMITTED,
    RequestState.APPROVED,
    RequestState.PROVISIONING,
    RequestState.AWAITING_MERGE,
    RequestState.FAILED,
)


@dataclass(frozen=True)
class Usage:
    cpu_millis: int = 0
    memory_mib: int = 0
    storage_gib: int = 0
    namespaces: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.cpu_millis + other.cpu_millis,
            self.memory_mib + other.memory_mib,
            self.storage_gib + other.storage_gib,
            self.namespaces + other.namespaces,
        )


def limits(tenant: Tenant) -> Usage:
    return Usage(
        tenant.budget_cpu_millis,
        tenant.budget_memory_mib,
        tenant.budget_storage_gib,
        tenant.budget_namespaces,
    )


LIVE_STATES = (NamespaceState.ACTIVE, NamespaceState.DECOMMISSIONING)


def usage(tenant: Tenant) -> Usage:
    live, requested = usage_parts(tenant)
    return live + requested


def usage_parts(tenant: Tenant) -> tuple[Usage, Usage]:
    """What the tenant's live namespaces hold (being torn down included), and what its
    requests claim on top: namespaces not live yet, and pending quota increases."""

    def summed(field: str, live: bool) -> Coalesce:
        states = LIVE_STATES if live else tuple(set(COUNTED_STATES) - set(LIVE_STATES))
        return Coalesce(Sum(field, filter=Q(state__in=states)), 0)

    totals = Namespace.objects.filter(tenant=tenant, state__in=COUNTED_STATES).aggregate(
        **{
            f"{field}_{part}": summed(field, part == "live")
            for field in ("cpu_millis", "memory_mib", "storage_gib")
            for part in ("live", "asked")
        },
        count_live=Count("id", filter=Q(state__in=LIVE_STATES)),
        count_asked=Count("id", filter=~Q(state__in=LIVE_STATES)),
    )
    live, requested = (
        Usage(
            totals[f"cpu_millis_{part}"],
            totals[f"memory_mib_{part}"],
            totals[f"storage_gib_{part}"],
            totals[f"count_{part}"],
        )
        for part in ("live", "asked")
    )
    changes = Request.objects.filter(
        tenant=tenant, kind=RequestKind.QUOTA_CHANGE, state__in=PENDING_REQUEST_STATES
    )
    current = {
        ns.name: ns
        for ns in Namespace.objects.filter(
            tenant=tenant,
            name__in=[r.payload["namespace"] for r in changes],
            state=NamespaceState.ACTIVE,
        )
    }
    for change in changes:
        namespace = current.get(change.payload["namespace"])
        if namespace is not None:
            requested = requested + increase(namespace, change.payload)
    return live, requested


def increase(namespace: Namespace, payload: dict) -> Usage:
    """What a quota change adds on top of a namespace's current quota (never negative)."""
    return Usage(
        max(payload["cpu_millis"] - namespace.cpu_millis, 0),
        max(payload["memory_mib"] - namespace.memory_mib, 0),
        max(payload.get("storage_gib", 0) - namespace.storage_gib, 0),
        0,
    )


def overruns(*, tenant: Tenant, wanted: Usage) -> dict[str, str]:
    """Field → message for every dimension the request would push past the budget, saying
    how much of it is in use by live namespaces and how much only requested."""
    (live, asked), budget = usage_parts(tenant), limits(tenant)
    used = live + asked
    dimensions = {
        "cpu": ("cpu_millis", " of CPU"),
        "memory": ("memory_mib", " of memory"),
        "storage": ("storage_gib", " of storage"),
        "namespaces": ("namespaces", ""),
    }
    problems = {}
    for field, (attribute, of_what) in dimensions.items():
        need, have, total = (
            getattr(wanted, attribute),
            getattr(used, attribute),
            getattr(budget, attribute),
        )
        if need and have + need > total:
            # What it asks for as it was typed ("500m (0.5 cores)"); the budget in the units
            # its meters show (cores, GiB), the parts taken without a unit, after "of its 8
            # cores".
            def bare(stored: int, dimension: str = field) -> str:
                return quantities.amount(dimension, stored).bare().plain()

            asked_for = quantities.amount(field, need).written()
            limit = quantities.amount(field, total).plain()
            by_namespaces = "in use" if field == "namespaces" else "in use by its namespaces"
            problems[field] = (
                f"Asks for {asked_for}{of_what}, but {tenant.slug} has {bare(have)} of its "
                f"budget of {limit}{of_what} taken: "
                f"{bare(getattr(live, attribute))} {by_namespaces}, "
                f"{bare(getattr(asked, attribute))} requested by requests not yet "
                f"provisioned; {bare(max(total - have, 0))} left."
            )
    return problems


def check_fits(*, tenant: Tenant, wanted: Usage) -> None:
    """Raise InvalidInput, one message per dimension with the numbers, when admitting a
    request that wants this much (its kind's `demand`) would push the tenant past its
    budget."""
    over = overruns(tenant=tenant, wanted=wanted)
    if over:
        raise InvalidInput.of(over)
