"""Kubernetes resource quantities ⇄ the integer units Berth stores.

CPU is stored in millicores, memory in MiB and storage in GiB so budgets can be summed in
SQL. A quantity is read with Kubernetes' own grammar (ASCII digits, an optional sign and
decimal point, then `m`, `k`, `M`, `G`, `T`, `P`, `E`, `Ki`, `Mi`, `Gi`, `Ti`, `Pi`, `Ei` or
an exponent such as `e3`) and its value with the official client's parser. It must be an
exact number of the unit Berth stores and at least its minimum: nothing is rounded, so
`100M` of memory (95.37Mi) is refused with the nearest whole amounts, and `0.0001` CPU or
`1Ki` of memory, which a quota would hold as zero, are refused rather than stored as zero.
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
# so "1e99999999" is a validation error, not a crash or a huge computation.
MAX_MAGNITUDE = 15
# k8s.io/apimachinery/pkg/api/resource: <sign><digits>[.<digits>]<suffix>, ASCII only.
GRAMMAR = re.compile(
    r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+|[KMGTPE]i|[numkMGTPE])?"
)
FORM = ("a number of ASCII digits with an optional decimal point, then a suffix: m, k, M, "
        "G (powers of 1000), Ki, Mi, Gi (powers of 1024) or an exponent such as e3")


def _parse(value: str | int) -> Decimal:
    text = str(value).strip() if isinstance(value, str | int) and not isinstance(
        value, bool) else None
    if not text or len(text) > 40 or not GRAMMAR.fullmatch(text):
        raise QuantityError(f"{str(value)[:40]!r} is not a Kubernetes quantity: write {FORM}.")
    if text.startswith("-"):
        raise QuantityError(f"{text!r} is negative: a quota is never negative.")
    quantity = parse_quantity(text)
    if quantity and quantity.adjusted() > MAX_MAGNITUDE:
        raise QuantityError(f"{text!r} is too large to be a quantity here.")
    return quantity


def _whole(value: str | int, unit: Decimal, *, what: str, unit_name: str, suffix: str,
           least: int, examples: str) -> int:
    """The quantity as a whole number of `unit`, at least `least`; refused, saying the
    nearest whole amounts, when it is not one."""
    quantity = _parse(value)
    amount = quantity / unit
    whole = int(amount)
    if amount != whole:
        lower, upper = whole, whole + 1
        nearest = (f"{upper}{suffix}" if lower < max(least, 1)
                   else f"{lower}{suffix} or {upper}{suffix}")
        raise QuantityError(
            f"{value} is {amount.normalize():f}{suffix}: {what} is counted in whole "
            f"{unit_name} (e.g. {examples}); write {nearest}."
        )
    if whole < least:
        raise QuantityError(
            f"{value} is less than {what} can be: at least {least}{suffix} (e.g. {examples})."
        )
    return whole


def cpu_to_millis(value: str | int) -> int:
    return _whole(value, Decimal("0.001"), what="CPU", unit_name="millicores", suffix="m",
                  least=1, examples="500m or 2")


def memory_to_mib(value: str | int) -> int:
    return _whole(value, MIB, what="memory", unit_name="MiB", suffix="Mi", least=1,
                  examples="512Mi or 4Gi")


def storage_to_gib(value: str | int) -> int:
    """Storage may be 0: a namespace that holds no persistent volumes."""
    return _whole(value, GIB, what="storage", unit_name="GiB", suffix="Gi", least=0,
                  examples="10Gi, or 0 for none")


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


# --- what people typed ------------------------------------------------------------------------

# Payload keys stored in Berth's integer units, shown back in the units people write.
_FOR_PEOPLE = {
    "cpu_millis": ("cpu", millis_to_cpu),
    "memory_mib": ("memory", mib_to_memory),
    "storage_gib": ("storage", gib_to_storage),
    "ttl_seconds": ("ttl", seconds_to_duration),
}


# What a request is about comes first; then how much of everything it asks for.
_NAMING_KEYS = ("app", "project", "namespace", "tier", "tiers", "cluster", "env_slug")


def payload_for_people(payload: dict) -> dict[str, object]:
    """A request's payload with quantities as people write them: `cpu_millis: 1000` is
    `cpu: 1`, `memory_mib: 2048` is `memory: 2Gi`, `ttl_seconds: 7200` is `ttl: 2h`."""
    shown: dict[str, object] = {}
    first = [key for key in _NAMING_KEYS if key in payload]
    for key, value in [(k, payload[k]) for k in first] + [
            (k, v) for k, v in payload.items() if k not in first]:
        name, convert = _FOR_PEOPLE.get(key, (key, None))
        shown[name] = convert(value) if convert and isinstance(value, int) and not isinstance(
            value, bool) else value
    return shown
