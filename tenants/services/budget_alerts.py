"""Budget alerts: a tenant's owners told, once a month, that its month's cost passed 80 % or
100 % of the threshold they set (`monthly_cost_alert`), or that what its namespaces hold
passed 80 % or 100 % of a dimension of its quota budget; and setting that threshold.

Run by beat and, for a tenant, once one of its requests is Ready (tenants.receivers): the
moment what it holds, and so what it costs, jumps."""

from __future__ import annotations

import re
from datetime import date, datetime
from decimal import Decimal

from django.db import IntegrityError, transaction
from django.utils import timezone

from tenants import audit
from tenants.errors import InvalidInput, NotAllowed
from tenants.models import BudgetAlert, Tenant, User
from tenants.notifications import budget_body
from tenants.selectors.budget_alerts import (
    Reading,
    alerts_recorded,
    budget_readings,
    may_set_cost_alert,
)
from tenants.selectors.charges import month_start
from tenants.signals import budget_threshold_reached

FIELD = "monthly_cost_alert"
# What the field holds: twelve digits, two of them after the point.
THRESHOLD_MAX = Decimal("9999999999.99")
CENT = Decimal("0.01")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)")


def check_budget_alerts(
    *, now: datetime | None = None, tenants: list[Tenant] | None = None
) -> list[BudgetAlert]:
    """Record and tell each threshold reached this month and not recorded yet, for `tenants`
    (default: every tenant not retired), in a fixed number of queries and one insert per
    alert. A measure past both 80 % and 100 % at once is told once, at 100 %; its 80 % is
    recorded with it, so it is not told later in the month. Each row is made under the
    unique constraint (tenant, month, measure, percent): when a concurrent check made it
    first, that check tells it and this one does not. E-mail and webhook go once the
    transaction commits (tenants.receivers)."""
    now = now or timezone.now()
    if tenants is None:
        tenants = list(Tenant.objects.filter(retired_at__isnull=True))
    month = month_start(timezone.localdate(now))
    recorded = alerts_recorded(tenants, month)
    made: list[BudgetAlert] = []
    for reading in budget_readings(tenants, now=now):
        key = (reading.tenant.pk, reading.measure)
        due = [percent for percent in reading.reached if (*key, percent) not in recorded]
        if due:
            made += _record_and_tell(reading, due, month)
    return made


def _record_and_tell(reading: Reading, due: list[int], month: date) -> list[BudgetAlert]:
    with transaction.atomic():
        made = [alert for percent in due if (alert := _record(reading, percent, month))]
        if not made:
            return []
        highest = max(alert.percent for alert in made)
        audit.record_all(
            [
                audit.event(
                    actor=None,
                    action="tenant.budget_alert",
                    obj=reading.tenant,
                    tenant_id=reading.tenant.pk,
                    after={
                        "measure": alert.measure,
                        "percent": alert.percent,
                        "month": f"{month:%Y-%m}",
                        "detail": alert.detail,
                        "told": alert.percent == highest,
                    },
                )
                for alert in made
            ]
        )
        tenant_id, event = reading.tenant.pk, budget_body(reading, highest, month=month)
        transaction.on_commit(
            lambda: budget_threshold_reached.send(
                sender=BudgetAlert, tenant_id=tenant_id, event=event
            )
        )
    return made


def _record(reading: Reading, percent: int, month: date) -> BudgetAlert | None:
    """The month's row of this threshold, or None when another check made it first."""
    try:
        with transaction.atomic():
            return BudgetAlert.objects.create(
                tenant=reading.tenant,
                month=month,
                measure=reading.measure,
                percent=percent,
                detail=reading.detail[:200],
            )
    except IntegrityError:
        return None


def set_cost_alert(
    *, actor: User, tenant: Tenant, amount: str | Decimal | None, source_ip: str | None = None
) -> Tenant:
    """Set the tenant's monthly cost alert (owners and platform admins): an amount above 0
    in the currency of its costs, at most two decimal places; empty or None clears it. A
    threshold the month's cost already passes is told at once, as beat would."""
    if not may_set_cost_alert(actor, tenant):
        raise NotAllowed(
            f"Only owners of {tenant.slug} and platform admins may set its monthly cost alert."
        )
    value = parse_cost_alert(amount)
    with transaction.atomic():
        locked = Tenant.objects.select_for_update().get(pk=tenant.pk)
        before = locked.monthly_cost_alert
        if before != value:
            locked.monthly_cost_alert = value
            locked.save(update_fields=[FIELD])
            audit.record(
                actor=actor,
                action="tenant.cost_alert",
                obj=locked,
                tenant_id=locked.pk,
                before={FIELD: _shown(before)},
                after={FIELD: _shown(value)},
                source_ip=source_ip,
            )
            if value is not None:
                check_budget_alerts(tenants=[locked])
    tenant.monthly_cost_alert = value
    return locked


def parse_cost_alert(amount: str | Decimal | None) -> Decimal | None:
    """The threshold as typed: None for nothing; InvalidInput naming the field otherwise."""
    text = "" if amount is None else str(amount).strip()
    if not text:
        return None

    def refused(why: str) -> InvalidInput:
        return InvalidInput.of({FIELD: f"The monthly cost alert {why}"})

    if not _NUMBER.fullmatch(text):
        raise refused(
            "is an amount such as 500 or 1250.50 (no currency sign, no thousands "
            "separator); leave it empty for no cost alert."
        )
    value = Decimal(text)  # the pattern admits only what Decimal reads
    if value <= 0:
        raise refused("must be above 0; leave it empty for no cost alert.")
    if value > THRESHOLD_MAX:
        raise refused(f"is at most {THRESHOLD_MAX:,}.")
    if value != value.quantize(CENT):
        raise refused("has at most 2 decimal places (cents).")
    return value.quantize(CENT)


def _shown(value: Decimal | None) -> str | None:
    return None if value is None else f"{value:.2f}"
