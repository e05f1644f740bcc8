"""Showback prices: what a unit of allocated quota costs on a cluster, set by platform
admins (the admin site saves through ClusterPrice.clean, the API through here), audited."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.db import transaction

from tenants import audit, selectors
from tenants.errors import InvalidInput, NotAllowed
from tenants.models import Cluster, ClusterPrice, User
from tenants.pricing import PRICE_FIELDS, price_problems

FIELDS = ["currency", *PRICE_FIELDS]


def _shown(price: ClusterPrice) -> dict[str, str]:
    return {name: str(getattr(price, name)) for name in FIELDS}


def set_cluster_prices(
    *, actor: User, cluster: Cluster, values: dict[str, Any], source_ip: str | None = None
) -> ClusterPrice:
    """Set the prices given in `values` (the others stay); every one checked first, none
    saved if one is wrong."""
    if not selectors.is_platform_admin(actor):
        raise NotAllowed("Only platform admins may set prices.")
    unknown = sorted(set(values) - set(FIELDS))
    problems = {name: [f"Not a price; the fields are {', '.join(FIELDS)}."] for name in unknown}
    problems |= {name: [message] for name, message in price_problems(values).items()}
    if problems:
        raise InvalidInput.of(problems)
    with transaction.atomic():
        price, _ = ClusterPrice.objects.select_for_update().get_or_create(cluster=cluster)
        before = _shown(price)
        for name, value in values.items():
            setattr(price, name, value if name == "currency" else Decimal(str(value)))
        price.save()
        after = _shown(price)
        if before != after:
            audit.record(
                actor=actor,
                action="cluster.prices",
                obj=cluster,
                before=before,
                after=after,
                source_ip=source_ip,
            )
    return price
