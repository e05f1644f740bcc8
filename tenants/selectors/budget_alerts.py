"""Budget alerts, read: each tenant's month's cost against the threshold its owners set and
its quota budget's use, dimension by dimension, for many tenants in a fixed number of
queries (tenants.services.budget_alerts records and sends what is reached); and the panel of
the tenant's page."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal

from django.db.models import Count, Sum
from django.utils import timezone

from tenants import budget, quantities
from tenants.choices import BudgetMeasure, Role
from tenants.models import BudgetAlert, Namespace, Tenant, User
from tenants.selectors.charges import month_start
from tenants.selectors.cost_totals import totals_by
from tenants.selectors.costs import rounded
from tenants.selectors.rights import is_platform_admin, role_in

# The shares of a budget that are told, lowest first.
THRESHOLDS = (80, 100)

# Quota measures: the budget.Usage attribute, its dimension (tenants.quantities), its unit.
QUOTA_MEASURES = (
    (BudgetMeasure.CPU, "cpu_millis", "cpu", "millicores"),
    (BudgetMeasure.MEMORY, "memory_mib", "memory", "MiB"),
    (BudgetMeasure.STORAGE, "storage_gib", "storage", "GiB"),
    (BudgetMeasure.NAMESPACES, "namespaces", "namespaces", "namespaces"),
)
OF_WHAT = {
    BudgetMeasure.CPU: " of CPU",
    BudgetMeasure.MEMORY: " of memory",
    BudgetMeasure.STORAGE: " of storage",
    BudgetMeasure.NAMESPACES: "",
}


@dataclass(frozen=True)
class Reading:
    """One measure of one tenant now: `amount` of `limit`, both in `unit` (the currency of
    its costs, or the stored unit of a quota dimension)."""

    tenant: Tenant
    measure: str
    amount: Decimal
    limit: Decimal
    unit: str
    detail: str

    @property
    def share(self) -> int:
        """Whole percent of the limit, rounded down; a limit of 0 used at all is 100."""
        if self.limit <= 0:
            return 100 if self.amount > 0 else 0
        return int(self.amount * 100 // self.limit)

    @property
    def reached(self) -> list[int]:
        """The thresholds this reading has reached (nothing used reaches none)."""
        if self.amount <= 0:
            return []
        return [percent for percent in THRESHOLDS if self.share >= percent]


def budget_readings(tenants: list[Tenant], *, now: datetime | None = None) -> list[Reading]:
    """Every measure of each of `tenants` with a limit: its month's cost when it has a cost
    threshold, and each quota dimension, as its live namespaces hold it (those being torn
    down included; requests not provisioned yet are not counted: they may still be
    refused). Costs as the dashboard's card sums them, quota use in one grouped query."""
    if not tenants:
        return []
    now = now or timezone.now()
    readings = []
    watched = [tenant for tenant in tenants if tenant.monthly_cost_alert is not None]
    costs = totals_by("tenant_id", now=now, tenants=watched) if watched else {}
    for tenant in watched:
        total = costs.get(tenant.pk)
        currency = total.currency if total is not None else "EUR"
        amount = rounded(total.total) if total is not None else Decimal("0.00")
        limit = Decimal(tenant.monthly_cost_alert or 0)
        readings.append(
            Reading(
                tenant=tenant,
                measure=BudgetMeasure.COST,
                amount=amount,
                limit=limit,
                unit=currency,
                detail=f"{currency} {amount:,.2f} of {currency} {limit:,.2f} this month",
            )
        )
    held = {
        row["tenant_id"]: row
        for row in Namespace.objects.filter(tenant__in=tenants, state__in=budget.LIVE_STATES)
        .order_by()
        .values("tenant_id")
        .annotate(
            cpu_millis=Sum("cpu_millis"),
            memory_mib=Sum("memory_mib"),
            storage_gib=Sum("storage_gib"),
            namespaces=Count("id"),
        )
    }
    for tenant in tenants:
        limits = budget.limits(tenant)
        for measure, attribute, dimension, unit in QUOTA_MEASURES:
            used = int((held.get(tenant.pk) or {}).get(attribute) or 0)
            total = getattr(limits, attribute)
            in_use = "in use" if measure == BudgetMeasure.NAMESPACES else "in use by its namespaces"
            readings.append(
                Reading(
                    tenant=tenant,
                    measure=measure,
                    amount=Decimal(used),
                    limit=Decimal(total),
                    unit=unit,
                    detail=f"{quantities.amount(dimension, used).bare().plain()} of its "
                    f"{quantities.amount(dimension, total).plain()}{OF_WHAT[measure]} {in_use}",
                )
            )
    return readings


def alerts_recorded(tenants: list[Tenant], month: date) -> set[tuple[int, str, int]]:
    """(tenant id, measure, percent) of every alert recorded in `month` for `tenants`."""
    return set(
        BudgetAlert.objects.filter(tenant__in=tenants, month=month).values_list(
            "tenant_id", "measure", "percent"
        )
    )


def may_set_cost_alert(user: User, tenant: Tenant) -> bool:
    return is_platform_admin(user) or role_in(user, tenant) == Role.OWNER


def budget_alerts_panel(user: User, tenant: Tenant, *, now: datetime | None = None) -> dict:
    """What the tenant's page shows of its budget alerts: the threshold, the month's cost and
    its share of it, this month's alerts, and whether `user` may set the threshold."""
    now = now or timezone.now()
    month = month_start(timezone.localdate(now))
    cost = next(
        (
            reading
            for reading in budget_readings([tenant], now=now)
            if reading.measure == BudgetMeasure.COST
        ),
        None,
    )
    return {
        "tenant": tenant,
        "month": month,
        "threshold": tenant.monthly_cost_alert,
        "cost": cost,
        "alerts": list(
            BudgetAlert.objects.filter(tenant=tenant, month=month).order_by(
                "sent_at", "measure", "percent"
            )
        ),
        "may_set": may_set_cost_alert(user, tenant),
    }
