"""Kubernetes resource quantities ⇄ the integer units Berth stores.

CPU is stored in millicores, memory in MiB and storage in GiB so budgets can be summed
in SQL; parsing follows Kubernetes' own quantity rules (the official client's parser).
"""

from __future__ import annotations

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
