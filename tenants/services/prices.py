"""Showback prices: what a unit of allocated quota costs on a cluster, set by platform
admins (the admin site and the API both save through here), from now or a later date, never
backwards: hours already counted keep the prices they were counted at. Audited."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.utils import timezone

from tenants import audit, selectors
from tenants.errors import InvalidInput, NotAllowed
from tenants.models import Cluster, ClusterPrice, User
from tenants.pricing import PRICE_FIELDS, price_problems

FIELDS = ["currency", *PRICE_FIELDS]
# Prices set before a cluster had any apply from the first instant counted.
SINCE_ALWAYS = datetime(1970, 1, 1, tzinfo=UTC)


def _shown(price: ClusterPrice | None) -> dict[str, str]:
    if price is None:
        return {}
    return {
        **{name: str(getattr(price, name)) for name in FIELDS},
        "effective_from": price.effective_from.isoformat(),
    }


def prices_in_force(cluster: Cluster, at: datetime | None = None) -> ClusterPrice | None:
    """The cluster's prices at `at` (now by default); None before its first."""
    return (
        ClusterPrice.objects.filter(cluster=cluster, effective_from__lte=at or timezone.now())
        .order_by("-effective_from")
        .first()
    )


def effective_moment(value: date | datetime | None, *, now: datetime) -> datetime:
    """When prices given with `value` apply: now when absent, a date's first midnight (the
    portal's time zone), a datetime as given. Refused when earlier than now."""
    if value is None:
        return now
    if not isinstance(value, datetime):
        value = datetime.combine(value, datetime.min.time(), tzinfo=timezone.get_current_timezone())
    elif timezone.is_naive(value):
        value = timezone.make_aware(value)
    if value < now:
        raise InvalidInput.of(
            {
                "effective_from": [
                    "Prices apply from now or a later date, never backwards: hours already "
                    "counted keep the prices they were counted at. For a correction of a "
                    "closed month, add an adjustment."
                ]
            }
        )
    return value


def set_cluster_prices(
    *,
    actor: User,
    cluster: Cluster,
    values: dict[str, Any],
    effective_from: date | datetime | None = None,
    source_ip: str | None = None,
) -> ClusterPrice:
    """Prices from `effective_from` (now when absent): those given in `values`, the others
    as they stand then. Every one checked first, none saved if one is wrong. A later date
    already set is changed in place."""
    if not selectors.is_platform_admin(actor):
        raise NotAllowed("Only platform admins may set prices.")
    unknown = sorted(set(values) - set(FIELDS))
    problems = {name: [f"Not a price; the fields are {', '.join(FIELDS)}."] for name in unknown}
    problems |= {name: [message] for name, message in price_problems(values).items()}
    if problems:
        raise InvalidInput.of(problems)
    now = timezone.now()
    start = effective_moment(effective_from, now=now)
    with transaction.atomic():
        Cluster.objects.select_for_update().filter(pk=cluster.pk).first()  # one writer a cluster
        scheduled = ClusterPrice.objects.filter(cluster=cluster, effective_from=start).first()
        before = scheduled or prices_in_force(cluster, start)
        price = scheduled or ClusterPrice(cluster=cluster, effective_from=start)
        if scheduled is None and before is not None:
            for name in FIELDS:
                setattr(price, name, getattr(before, name))
        for name, value in values.items():
            setattr(price, name, value if name == "currency" else Decimal(str(value)))
        if (
            scheduled is None
            and before is not None
            and _shown_prices(before) == _shown_prices(price)
        ):
            return before  # nothing changes: no new price list, nothing audited
        price.save()
        after = _shown(price)
        if _shown(before) != after:
            audit.record(
                actor=actor,
                action="cluster.prices",
                obj=cluster,
                before=_shown(before),
                after=after,
                source_ip=source_ip,
            )
    return price


def _shown_prices(price: ClusterPrice) -> dict[str, str]:
    return {name: str(getattr(price, name)) for name in FIELDS}
