"""Prices per unit of what a namespace holds, and the arithmetic of showback. Pure: no
database. Checked here once for the admin site (ClusterPrice.clean), the API's serializer
and the service alike."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

# A month, for prices given per month: 730 hours (8,760 a year over 12), as cloud price
# lists count it.
HOURS_PER_MONTH = Decimal(730)
PRICE_PLACES = 6
PRICE_MAX = Decimal(1_000_000)

# Field → what it prices, as people read it. A namespace asleep (hibernation: its
# workloads scaled to zero, its quota still held) is charged its CPU and memory at the
# asleep prices instead (0 unless set), its storage and itself as when awake.
PRICE_FIELDS: dict[str, str] = {
    "cpu_core_hour": "per CPU core-hour",
    "memory_gib_hour": "per GiB-hour of memory",
    "storage_gib_month": "per GiB-month of storage",
    "namespace_month": "per namespace-month",
    "asleep_cpu_core_hour": "per CPU core-hour asleep",
    "asleep_memory_gib_hour": "per GiB-hour of memory asleep",
}
# The price of CPU and of memory, awake and asleep.
COMPUTE_PRICES = {
    False: ("cpu_core_hour", "memory_gib_hour"),
    True: ("asleep_cpu_core_hour", "asleep_memory_gib_hour"),
}


def price_problems(values: dict[str, Any]) -> dict[str, str]:
    """Field → what is wrong with it: prices are decimals from 0 to 1,000,000 with at most
    six places; the currency is three capital letters (ISO 4217, e.g. EUR)."""
    problems = {}
    for name, what in PRICE_FIELDS.items():
        if name not in values:
            continue
        value = values[name]
        try:
            number = Decimal(str(value)) if not isinstance(value, bool) else None
        except (InvalidOperation, ValueError):
            number = None
        if number is None or not number.is_finite():
            problems[name] = f"The price {what} must be a decimal number, like 0.031."
        elif number < 0:
            problems[name] = f"The price {what} cannot be negative."
        elif number > PRICE_MAX:
            problems[name] = f"The price {what} is at most {PRICE_MAX:,}."
        elif -number.as_tuple().exponent > PRICE_PLACES:
            problems[name] = f"The price {what} has at most {PRICE_PLACES} decimal places."
    currency = values.get("currency")
    if currency is not None and not (
        isinstance(currency, str)
        and len(currency) == 3
        and currency.isascii()
        and currency.isalpha()
        and currency.isupper()
    ):
        problems["currency"] = "The currency is a three-letter code in capitals, like EUR."
    return problems


def hourly(
    *,
    cpu_millis: int,
    memory_mib: int,
    storage_gib: int,
    prices: dict[str, Decimal],
    asleep: bool = False,
) -> Decimal:
    """What holding this quota costs per hour at `prices` (the PRICE_FIELDS; the asleep
    ones are read only for a namespace `asleep`)."""
    cpu, memory = COMPUTE_PRICES[asleep]
    return (
        Decimal(cpu_millis) / 1000 * prices[cpu]
        + Decimal(memory_mib) / 1024 * prices[memory]
        + Decimal(storage_gib) * prices["storage_gib_month"] / HOURS_PER_MONTH
        + prices["namespace_month"] / HOURS_PER_MONTH
    )
