"""A month's pieces (tenants.charging.Piece) and adjustments as FOCUS rows: a tuple of
cells per row in the order of tenants.focus.columns.NAMES."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from json.encoder import encode_basestring
from typing import Any, Protocol

from tenants.charging import Piece, hours_between
from tenants.focus.columns import (
    NAMES,
    RESOURCE_TYPE,
    SERVICE_CATEGORY,
    SERVICE_NAME,
    SERVICE_SUBCATEGORY,
    SKUS,
    TAG_PREFIX,
)
from tenants.pricing import HOURS_PER_MONTH, PRICE_FIELDS

PLACES = Decimal("1e-10")  # of a quantity: less than a microsecond's worth of an hour
# A price's place in a piece's prices (and in a namespace's SkuPriceIds).
PRICE_INDEX = {name: index for index, name in enumerate(PRICE_FIELDS)}

Row = tuple[str | None, ...]
# A piece's charge for one SKU: the index of its price in PRICE_FIELDS, cost, unit price,
# quantity, description, unit, SKU id, meter.
Charge = tuple[int, str, str, str, str, str, str, str]


class Adjusted(Protocol):
    """A dated correction of a closed month (tenants.selectors.charges.Adjustment)."""

    amount: Decimal
    currency: str
    note: str
    namespace: str
    added_at: datetime


@dataclass(frozen=True)
class Account:
    """The billing account: the Berth installation."""

    id: str
    name: str
    provider: str = "Berth"


def number(value: Decimal) -> str:
    """A decimal as the Numeric Format asks: digits, a point, a minus sign below zero; no
    exponent, no trailing zeros."""
    text = format(value.normalize(), "f")
    return "0" if text == "-0" else text


def rows(
    pieces: Iterable[Piece],
    about: Mapping[int, Mapping[str, Any]],
    adjustments: Mapping[int, list[Adjusted]],
    *,
    account: Account,
    sub_accounts: Mapping[int, tuple[str, str]],
    period: tuple[datetime, datetime],
) -> list[Row]:
    """The month's rows in NAMES' order. A cell is text (a decimal as `number` writes it,
    a date-time in UTC ending in Z, Tags as a JSON object) or None (null). `about` says
    what each piece's namespace is (tenants.selectors.charges.MonthPieces), `sub_accounts`
    each tenant id's slug and name, `period` the month's bounds."""
    stamp, charged = _Stamps(), _Charges()
    account_id, account_name, provider = account.id, account.name, account.provider
    period_end, period_start = stamp(period[1]), stamp(period[0])
    kind, service = RESOURCE_TYPE, SERVICE_NAME
    category, subcategory = SERVICE_CATEGORY, SERVICE_SUBCATEGORY
    namespaces = _Namespaces(about, sub_accounts)
    found: list[Row] = []
    append = found.append
    for piece in sorted(pieces, key=lambda each: (each.namespace, each.start)):
        slug, name, resource_id, resource_name, price_ids, tags = namespaces[piece.namespace]
        currency, end, start = piece.currency, stamp(piece.end), stamp(piece.start)
        for index, cost, price, quantity, description, unit, sku, meter in charged(piece):
            append(
                (
                    cost,
                    account_id,
                    account_name,
                    currency,
                    period_end,
                    period_start,
                    "Usage",
                    None,
                    description,
                    "Usage-Based",
                    end,
                    start,
                    cost,
                    cost,
                    provider,
                    cost,
                    price,
                    quantity,
                    unit,
                    provider,
                    provider,
                    resource_id,
                    resource_name,
                    kind,
                    category,
                    service,
                    subcategory,
                    sku,
                    meter,
                    None,
                    price_ids[index],
                    slug,
                    name,
                    tags,
                )
            )
    found.extend(_corrections(adjustments, namespaces, account, (period_start, period_end), stamp))
    return found


def _corrections(
    adjustments: Mapping[int, list[Adjusted]],
    namespaces: _Namespaces,
    account: Account,
    period: tuple[str, str],
    stamp: _Stamps,
) -> Iterator[Row]:
    """A row per adjustment, over the whole month; about the namespace it names when its
    tenant had one of that name (on one cluster) in the month."""
    called: dict[tuple[int, str], list[int]] = {}
    for key, info in namespaces.about.items():
        called.setdefault((info["tenant"], info["name"]), []).append(key)
    for tenant, corrections in sorted(adjustments.items()):
        slug, name = namespaces.sub_accounts[tenant]
        for each in sorted(corrections, key=lambda each: each.added_at):
            amount = number(each.amount)
            cells: dict[str, str | None] = {
                "BilledCost": amount,
                "BillingAccountId": account.id,
                "BillingAccountName": account.name,
                "BillingCurrency": each.currency,
                "BillingPeriodEnd": period[1],
                "BillingPeriodStart": period[0],
                "ChargeCategory": "Adjustment",
                "ChargeClass": "Correction",
                "ChargeDescription": f"Adjustment added {stamp(each.added_at)[:10]}: {each.note}",
                "ChargeFrequency": "One-Time",
                "ChargePeriodEnd": period[1],
                "ChargePeriodStart": period[0],
                "ContractedCost": amount,
                "EffectiveCost": amount,
                "InvoiceIssuerName": account.provider,
                "ListCost": amount,
                "ProviderName": account.provider,
                "PublisherName": account.provider,
                "ServiceCategory": SERVICE_CATEGORY,
                "ServiceName": SERVICE_NAME,
                "ServiceSubcategory": SERVICE_SUBCATEGORY,
                "SubAccountId": slug,
                "SubAccountName": name,
            }
            named = {
                namespaces[key][2]: namespaces[key]
                for key in called.get((tenant, each.namespace), ())
            }
            if len(named) == 1:
                ((_, _, resource_id, resource_name, _, tags),) = named.values()
                cells["ResourceId"], cells["ResourceName"] = resource_id, resource_name
                cells["ResourceType"], cells["Tags"] = RESOURCE_TYPE, tags
            yield tuple(cells.get(column) for column in NAMES)


# A namespace as its rows say it: its tenant's slug and name, ResourceId, ResourceName,
# SkuPriceId per price (PRICE_FIELDS' order), Tags.
Known = tuple[str, str, str, str, tuple[str, ...], str]


class _Namespaces(dict[int, Known]):
    """Namespace key → Known, each worked out once."""

    def __init__(
        self, about: Mapping[int, Mapping[str, Any]], sub_accounts: Mapping[int, tuple[str, str]]
    ) -> None:
        super().__init__()
        self.about, self.sub_accounts = about, sub_accounts
        self.price_ids: dict[str, tuple[str, ...]] = {}
        self.tags: dict[tuple[str, str, str], str] = {}

    def __missing__(self, key: int) -> Known:
        info = self.about[key]
        cluster = info["cluster"]
        price_ids = self.price_ids.get(cluster)
        if price_ids is None:
            price_ids = self.price_ids[cluster] = tuple(
                f"{cluster}/{name}" for name in PRICE_FIELDS
            )
        labels = (cluster, info.get("project") or "", info["tier"])
        tags = self.tags.get(labels)
        if tags is None:
            tags = self.tags[labels] = _tags(*labels)
        self[key] = known = (
            *self.sub_accounts[info["tenant"]],
            f"{cluster}/{info['name']}",
            info["name"],
            price_ids,
            tags,
        )
        return known


def _tags(cluster: str, project: str, tier: str) -> str:
    """Berth's tags of a namespace as a JSON object (Key-Value Format): its cluster, its
    project if it has one, its tier."""
    tags = {"cluster": cluster, "project": project, "tier": tier}
    return (
        "{"
        + ",".join(
            f"{encode_basestring(TAG_PREFIX + key)}:{encode_basestring(value)}"
            for key, value in tags.items()
            if value
        )
        + "}"
    )


class _Stamps(dict[datetime, str]):
    """Date-times as the Date/Time Format asks (UTC, to the second, ending in Z), each
    distinct one written once."""

    def __call__(self, moment: datetime) -> str:
        text = self.get(moment)
        if text is None:
            text = self[moment] = moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return text


class _Charges(dict[tuple[Any, ...], list[Charge]]):
    """A piece's charges per SKU: (price index, cost, unit price, quantity, description,
    unit, SKU, meter), worked out once per quota, prices, length of time and whether asleep
    (most namespaces of a month share theirs). A piece asleep is charged its CPU and memory
    at the asleep prices."""

    def __init__(self) -> None:
        super().__init__()
        self.described: dict[tuple[Any, ...], tuple[str, str]] = {}

    def __call__(self, piece: Piece) -> list[Charge]:
        key = (piece.cpu_millis, piece.memory_mib, piece.storage_gib, piece.prices)
        key += (piece.currency, piece.end - piece.start, piece.asleep)
        found = self.get(key)
        if found is None:
            found = self[key] = self._work_out(piece)
        return found

    def _work_out(self, piece: Piece) -> list[Charge]:
        hours = hours_between(piece.start, piece.end)
        spans = (hours, hours / HOURS_PER_MONTH)
        held = (piece.cpu_millis, piece.memory_mib, piece.storage_gib, 1)
        found = []
        for position, sku in enumerate(SKUS):
            price_field = (piece.asleep and sku.asleep_price_field) or sku.price_field
            index = PRICE_INDEX[price_field]
            amount, price = Decimal(held[position]) / sku.divisor, piece.prices[index]
            quantity = (amount * spans[sku.per_month]).quantize(PLACES)
            if not quantity:
                continue
            said = (index, held[position], price, piece.currency)
            if said not in self.described:
                self.described[said] = (
                    number(price),
                    f"{sku.what.format(number(amount))} at {number(price)} {piece.currency} "
                    f"{PRICE_FIELDS[price_field]}",
                )
            price_text, description = self.described[said]
            found.append(
                (
                    index,
                    number(price * quantity),
                    price_text,
                    number(quantity),
                    description,
                    sku.unit,
                    sku.sku_id,
                    sku.meter,
                )
            )
        return found
