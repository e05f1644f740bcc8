"""A tenant's budget as people read it: used, total and left per dimension."""

from __future__ import annotations

from tenants import budget, quantities
from tenants.models import Tenant

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
    namespaces); `*_amount` are the same in stored units (millicores, MiB, GiB), for a
    meter. Usage is tenants.budget.usage: a couple of aggregate queries, whatever the size.
    """
    used, limit = budget.usage(tenant), budget.limits(tenant)
    rows = []
    for key, label, attribute, show in BUDGET_DIMENSIONS:
        have, total = getattr(used, attribute), getattr(limit, attribute)
        left = max(total - have, 0)
        # Whole percent, rounded down (past 100 when a budget was lowered below its use);
        # nothing left of a zero budget is as full as a used-up one.
        percent = have * 100 // total if total else 100
        rows.append({
            "key": key,
            "label": label,
            "used": show(have),
            "total": show(total),
            "left": show(left),
            "used_amount": have,
            "total_amount": total,
            "left_amount": left,
            "percent": percent,
            "low": total * BUDGET_LOW_PERCENT / 100,
            "high": total * BUDGET_NEAR_LIMIT_PERCENT / 100,
            "near_limit": percent >= BUDGET_NEAR_LIMIT_PERCENT,
        })
    return rows
