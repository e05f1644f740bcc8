"""Kubernetes resource quantities ⇄ the integer units Berth stores.

CPU is stored in millicores, memory in MiB and storage in GiB so budgets can be summed
in SQL; parsing follows Kubernetes' own quantity rules (the official client's parser).
"""

from __future__ import annotations

import re
from decimal import Decimal

from kubernetes.utils.quantity import parse_quantity

MIB = Decimal(2**20)
GIB = Decimal(2**30)


class QuantityError(ValueError):
    pass


# Far beyond any cluster (10^15 cores, exbibytes): refused before converting to an integer,
# so "inf", "NaN" or "1e99999999" is a validation error, not a crash or a huge computation.
MAX_MAGNITUDE = 15


def _parse(value: str | int) -> Decimal:
    try:
        quantity = parse_quantity(value)
        if not quantity.is_finite():
            raise ValueError("not finite")
        if quantity.adjusted() > MAX_MAGNITUDE:
            raise QuantityError(f"{str(value)[:40]!r} is too large to be a quantity here")
        negative = quantity < 0
    except (ValueError, ArithmeticError) as exc:
        if isinstance(exc, QuantityError):
            raise
        raise QuantityError(
            f"{str(value)[:40]!r} is not a Kubernetes quantity (e.g. 500m, 2, 4Gi)"
        ) from exc
    if negative:
        raise QuantityError(f"{value!r} is negative")
    return quantity


def cpu_to_millis(value: str | int) -> int:
    return int(_parse(value) * 1000)


def memory_to_mib(value: str | int) -> int:
    return int(_parse(value) / MIB)


def storage_to_gib(value: str | int) -> int:
    return int(_parse(value) / GIB)


def millis_to_cpu(millis: int) -> str:
    return str(millis // 1000) if millis % 1000 == 0 else f"{millis}m"


def mib_to_memory(mib: int) -> str:
    return f"{mib // 1024}Gi" if mib % 1024 == 0 and mib else f"{mib}Mi"


def gib_to_storage(gib: int) -> str:
    return f"{gib}Gi"


# --- durations (TTLs) -------------------------------------------------------------------------

_DURATION = re.compile(r"^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$")
_UNITS = (("d", 86400), ("h", 3600), ("m", 60), ("s", 1))
MAX_DURATION_SECONDS = 366 * 86400


def duration_to_seconds(value: str | int) -> int:
    """'90m', '2h', '1d12h', '45s' or a number of seconds → seconds."""
    text = str(value).strip().lower()
    match = _DURATION.match(text)
    if text.isdigit() and len(text) <= 12:
        seconds = int(text)
    elif text and match and len(text) <= 20:
        counts = match.groups()
        seconds = sum(int(n or 0) * size for n, (_, size) in zip(counts, _UNITS, strict=True))
    else:
        raise QuantityError(
            f"{text[:40]!r} is not a duration: write e.g. 30m, 2h, 3d, 1d12h or seconds"
        )
    if seconds > MAX_DURATION_SECONDS:
        raise QuantityError(f"{text[:40]!r} is longer than a year")
    return seconds


def ttl_to_seconds(value: str | int) -> int:
    """A time to live in seconds: a duration of at least one minute."""
    seconds = duration_to_seconds(value)
    if seconds < 60:
        raise QuantityError("A TTL is at least 1 minute.")
    return seconds


def seconds_to_duration(seconds: int) -> str:
    """The shortest of 3d, 1d12h, 90m, ... for a number of seconds."""
    if seconds <= 0:
        return "0s"
    parts = []
    for unit, size in _UNITS:
        count, seconds = divmod(seconds, size)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts)
