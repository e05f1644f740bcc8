"""A tenant's budget as people read it: used, total and left per dimension."""

from __future__ import annotations

from django.db.models import ExpressionWrapper, F, FloatField
from django.db.models.functions import Greatest

from tenants import budget, quantities
from tenants.models import Namespace, Tenant

# A budget dimension this full (or fuller) is flagged; the meter turns amber from LOW.
BUDGET_NEAR_LIMIT_PERCENT = 90


BUDGET_LOW_PERCENT = 75


BUDGET_DIMENSIONS = (
    # key, label, attribute of budget.Usage, how a person reads the amount
    ("cpu", "CPU", "cpu_millis", quantities.millis_to_cpu),
    ("memory", "Memory", "memory_mib", quantities.mib_to_memory),
    ("storage", "Storage", "storage_gib", quantities.gib_to_storage),
    ("namespaces", "Namespaces", "namespaces", int),
)


def budget_summary(tenant: Tenant) -> list[dict]:
    """Per dimension (CPU, memory, storage, namespaces): what the tenant uses of its budget.

    `used`, `total` and `left` are what a person reads (Kubernetes quantities; a count for
    namespaces), and `used` splits into `live` (its live namespaces) and `requested` (what
    its requests claim on top); `*_amount` are the same in stored units, and `*_percent`
    each part's share of the bar. Two or three aggregate queries, whatever the size.
    """
    live_usage, requested_usage = budget.usage_parts(tenant)
    limit = budget.limits(tenant)
    rows = []
    for key, label, attribute, show in BUDGET_DIMENSIONS:
        live, requested = getattr(live_usage, attribute), getattr(requested_usage, attribute)
        have, total = live + requested, getattr(limit, attribute)
        left = max(total - have, 0)
        # Whole percent, rounded down (past 100 when a budget was lowered below its use);
        # nothing left of a zero budget is as full as a used-up one.
        percent = have * 100 // total if total else 100
        live_percent = min(live * 100 / total, 100) if total else 0
        rows.append(
            {
                "key": key,
                "label": label,
                "used": show(have),
                "live": show(live),
                "requested": show(requested),
                "total": show(total),
                "left": show(left),
                "used_amount": have,
                "live_amount": live,
                "requested_amount": requested,
                "total_amount": total,
                "left_amount": left,
                "percent": percent,
                "live_percent": round(live_percent, 2),
                "requested_percent": round(
                    min(requested * 100 / total, 100 - live_percent) if total else 0, 2
                ),
                "low": total * BUDGET_LOW_PERCENT / 100,
                "high": total * BUDGET_NEAR_LIMIT_PERCENT / 100,
                "near_limit": percent >= BUDGET_NEAR_LIMIT_PERCENT,
            }
        )
    return rows


def namespaces_using_most(tenant: Tenant, limit: int = 5) -> list[dict]:
    """The tenant's namespaces (live or requested) holding the largest share of any budget
    dimension, largest first: where to look when the budget runs out. One query."""
    budgets = budget.limits(tenant)

    def share(field: str, total: int) -> ExpressionWrapper:
        return ExpressionWrapper(F(field) * 100.0 / max(total, 1), output_field=FloatField())

    shares = {
        "cpu_share": share("cpu_millis", budgets.cpu_millis),
        "memory_share": share("memory_mib", budgets.memory_mib),
        "storage_share": share("storage_gib", budgets.storage_gib),
    }
    rows = (
        Namespace.objects.filter(tenant=tenant, state__in=budget.COUNTED_STATES)
        .annotate(**shares, largest=Greatest(*shares.values()))
        .order_by("-largest", "name")[:limit]
    )
    return [
        {
            "namespace": namespace,
            "cpu": quantities.amount("cpu", namespace.cpu_millis),
            "memory": quantities.amount("memory", namespace.memory_mib),
            "storage": quantities.amount("storage", namespace.storage_gib),
            "largest": int(namespace.largest + 0.5),  # half up: 2.5 % reads 3 %
            "live": namespace.state in budget.LIVE_STATES,
        }
        for namespace in rows
    ]
