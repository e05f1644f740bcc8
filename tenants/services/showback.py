"""Closed months and their corrections. At the start of a month beat closes the months
before it: each is counted once into MonthlyCharge rows that never change (the pages, the
API and the FOCUS export read them ever after), and a correction is a dated adjustment row
a platform admin adds, shown as such."""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Min
from django.utils import timezone

from tenants import audit, selectors
from tenants.choices import ChargeKind
from tenants.errors import InvalidInput, NotAllowed
from tenants.models import Allocation, ClosedMonth, MonthlyCharge, Tenant, User
from tenants.pricing import PRICE_FIELDS
from tenants.selectors.charges import (
    midnight,
    month_pieces,
    month_start,
    month_window,
    next_month,
    parse_month,
)
from tenants.selectors.costs import main_currency

# Months closed in one run at most: a first run on an old installation catches up over a
# few runs rather than in one long transaction.
CLOSE_AT_ONCE = 24
ADJUSTMENT_MAX = Decimal(1_000_000_000)
ADJUSTMENT_PLACES = 6
NOTE_MAX = 500


def close_month(first: date, *, now: datetime | None = None) -> ClosedMonth | None:
    """Count the month that starts on `first` into rows that never change. Only a month
    that is over; once (a second call, or one racing it, changes nothing). Returns the
    closed month, or None when it was closed already."""
    now = now or timezone.now()
    if midnight(next_month(first)) > now:
        raise InvalidInput.of({"month": [f"{first:%Y-%m} is not over yet: it closes after."]})
    with transaction.atomic():
        if ClosedMonth.objects.filter(month=first).exists():
            return None
        found = month_pieces(first, now)
        rows = []
        for piece in found.pieces:
            about = found.about[piece.namespace]
            rows.append(
                MonthlyCharge(
                    month=first,
                    kind=ChargeKind.CHARGE,
                    tenant_id=about["tenant"],
                    namespace_id=piece.namespace,
                    namespace_name=about["name"],
                    cluster_name=about["cluster"],
                    project_name=about["project"],
                    tier_slug=about["tier"],
                    ephemeral=about["ephemeral"],
                    currency=piece.currency,
                    cpu_millis=piece.cpu_millis,
                    memory_mib=piece.memory_mib,
                    storage_gib=piece.storage_gib,
                    **dict(zip(PRICE_FIELDS, piece.prices, strict=True)),
                    charged_from=piece.start,
                    charged_until=piece.end,
                    cost=piece.cost.quantize(Decimal("1e-10")),
                    asleep=piece.asleep,
                    savings=piece.savings.quantize(Decimal("1e-10")),
                )
            )
        try:
            with transaction.atomic():
                closed = ClosedMonth.objects.create(month=first)
                MonthlyCharge.objects.bulk_create(rows, batch_size=2000)
        except IntegrityError:  # closed meanwhile by another run
            return None
    return closed


def close_due_months(*, now: datetime | None = None) -> list[date]:
    """Close every month that is over and not closed yet, oldest first, from the first
    month anything was held (at most CLOSE_AT_ONCE a run). Returns the months closed."""
    now = now or timezone.now()
    this_month = month_start(timezone.localdate(now))
    last_closed = ClosedMonth.objects.order_by("-month").values_list("month", flat=True).first()
    if last_closed is not None:
        month = next_month(last_closed)
    else:
        first_held = Allocation.objects.aggregate(first=Min("started_at"))["first"]
        if first_held is None:
            return []
        month = month_start(timezone.localdate(first_held))
    closed = []
    while month < this_month and len(closed) < CLOSE_AT_ONCE:
        if close_month(month, now=now) is not None:
            closed.append(month)
        month = next_month(month)
    return closed


def add_adjustment(
    *,
    actor: User,
    tenant: Tenant,
    month: str | date,
    amount: Any,
    note: str,
    namespace: str = "",
    currency: str = "",
    source_ip: str | None = None,
) -> MonthlyCharge:
    """A dated correction of a closed month of `tenant`: `amount` (negative for a credit)
    in the month's currency, with the reason in `note`. Platform admins only; audited."""
    if not selectors.is_platform_admin(actor):
        raise NotAllowed("Only platform admins may correct a closed month.")
    first, problems = _adjusted_month(month)
    value, problem = _amount(amount)
    if problem:
        problems["amount"] = [problem]
    note = (note or "").strip()
    if not note:
        problems["note"] = ["Say why: the note is shown beside the adjustment."]
    elif len(note) > NOTE_MAX:
        problems["note"] = [f"At most {NOTE_MAX} characters."]
    if len(namespace or "") > 63:
        problems["namespace"] = ["A namespace name has at most 63 characters."]
    if problems:
        raise InvalidInput.of(problems)
    assert first is not None and value is not None
    charges = MonthlyCharge.objects.filter(month=first, tenant=tenant, kind=ChargeKind.CHARGE)
    usual = main_currency(list(charges.values_list("currency", flat=True)))
    if currency and currency != usual and not charges.filter(currency=currency).exists():
        raise InvalidInput.of(
            {
                "currency": [
                    f"{tenant.slug} was charged in {usual} in {first:%Y-%m}, not {currency}."
                ]
            }
        )
    start, end = month_window(first, timezone.now())
    with transaction.atomic():
        row = MonthlyCharge.objects.create(
            month=first,
            kind=ChargeKind.ADJUSTMENT,
            tenant=tenant,
            namespace_name=namespace or "",
            currency=currency or usual,
            charged_from=start,
            charged_until=end,
            cost=value,
            note=note,
            created_by=actor,
        )
        audit.record(
            actor=actor,
            action="costs.adjustment",
            obj=tenant,
            tenant_id=tenant.pk,
            after={
                "month": f"{first:%Y-%m}",
                "amount": str(value),
                "currency": row.currency,
                "note": note,
                "namespace": namespace or "",
            },
            source_ip=source_ip,
        )
    return row


def _adjusted_month(month: str | date) -> tuple[date | None, dict[str, list[str]]]:
    try:
        first = month if isinstance(month, date) else parse_month(month)
    except ValueError:
        first = None
    if first is None:
        return None, {"month": ["Give the month as YYYY-MM."]}
    if not ClosedMonth.objects.filter(month=first).exists():
        return first, {
            "month": [
                f"{first:%Y-%m} is not closed: only a closed month takes adjustments (an open "
                "month is still worked out from the history)."
            ]
        }
    return first, {}


def _amount(amount: Any) -> tuple[Decimal | None, str]:
    try:
        value = Decimal(str(amount)) if not isinstance(amount, bool) else None
    except (InvalidOperation, ValueError):
        value = None
    if value is None or not value.is_finite():
        return None, "A decimal amount, like -12.50 for a credit."
    if value == 0:
        return None, "An adjustment of nothing changes nothing."
    if abs(value) > ADJUSTMENT_MAX:
        return None, f"At most {ADJUSTMENT_MAX:,} either way."
    if -int(value.as_tuple().exponent) > ADJUSTMENT_PLACES:
        return None, f"At most {ADJUSTMENT_PLACES} decimal places."
    value = value.normalize()  # as written: -12.500000 is -12.50
    return (value.quantize(Decimal("0.01")) if value.as_tuple().exponent > -2 else value), ""
