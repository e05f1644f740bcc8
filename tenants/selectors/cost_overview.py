"""The platform's costs page: a month's cost per tenant, cluster and tier, closed or open,
added up by the database (tenants.selectors.cost_totals) whatever the number of namespaces."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal

from django.db.models import Sum
from django.utils import timezone

from tenants.choices import ChargeKind
from tenants.models import ClosedMonth, MonthlyCharge, Tenant
from tenants.selectors.charges import month_start, next_month, previous_month
from tenants.selectors.cost_totals import Total, totals_by


@dataclass
class CostOverview:
    month: date
    closed_at: datetime | None
    tenants: list[tuple[Tenant, Total]]
    clusters: list[Total]
    tiers: list[Total]
    adjustments: int
    adjusted: dict[str, Decimal]
    previous: date
    following: date | None

    @property
    def totals(self) -> list[tuple[str, Decimal]]:
        """The month's total per currency, dearest first."""
        found: dict[str, Decimal] = {}
        for _, line in self.tenants:
            found[line.currency] = found.get(line.currency, Decimal(0)) + line.total
        return sorted(found.items(), key=lambda item: (-item[1], item[0]))

    @property
    def savings(self) -> list[tuple[str, Decimal]]:
        """What sleeping saved in the month per currency, when any namespace slept."""
        found: dict[str, Decimal] = {}
        for _, line in self.tenants:
            if line.asleep_hours:
                found[line.currency] = found.get(line.currency, Decimal(0)) + line.savings
        return sorted(found.items(), key=lambda item: (-item[1], item[0]))


def cost_overview(month: date | None = None, *, now: datetime | None = None) -> CostOverview:
    now = now or timezone.now()
    this_month = month_start(timezone.localdate(now))
    first = month_start(month or this_month)
    by_tenant = totals_by("tenant_id", month=first, now=now)
    tenants = {tenant.pk: tenant for tenant in Tenant.objects.filter(pk__in=list(by_tenant))}
    adjustments = MonthlyCharge.objects.filter(month=first, kind=ChargeKind.ADJUSTMENT)
    adjusted = dict(adjustments.order_by().values_list("currency").annotate(amount=Sum("cost")))
    closed = ClosedMonth.objects.filter(month=first).values_list("closed_at", flat=True).first()

    def dearest(lines) -> list:
        return sorted(lines, key=lambda line: (-line.total, str(line.key)))

    return CostOverview(
        month=first,
        closed_at=closed,
        tenants=[
            (tenants[line.key], line) for line in dearest(by_tenant.values()) if line.key in tenants
        ],
        clusters=dearest(totals_by("cluster__name", month=first, now=now).values()),
        tiers=dearest(totals_by("namespace__tier__slug", month=first, now=now).values()),
        adjustments=adjustments.count(),
        adjusted=adjusted,
        previous=previous_month(first),
        following=next_month(first) if first < this_month else None,
    )
