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
from dataclasses import dataclass
from decimal import Decimal

from django.utils.html import escape, format_html
from django.utils.safestring import SafeString
from kubernetes.utils.quantity import parse_quantity

from tenants.choices import EndCause, GitOpsEngine

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
FORM = (
    "a number of ASCII digits with an optional decimal point, then a suffix: m, k, M, "
    "G (powers of 1000), Ki, Mi, Gi (powers of 1024) or an exponent such as e3"
)


def _parse(value: str | int) -> Decimal:
    text = (
        str(value).strip() if isinstance(value, str | int) and not isinstance(value, bool) else None
    )
    if not text or len(text) > 40 or not GRAMMAR.fullmatch(text):
        raise QuantityError(f"{str(value)[:40]!r} is not a Kubernetes quantity: write {FORM}.")
    if text.startswith("-"):
        raise QuantityError(f"{text!r} is negative: a quota is never negative.")
    quantity = parse_quantity(text)
    if quantity and quantity.adjusted() > MAX_MAGNITUDE:
        raise QuantityError(f"{text!r} is too large to be a quantity here.")
    return quantity


def _whole(
    value: str | int,
    unit: Decimal,
    *,
    what: str,
    unit_name: str,
    suffix: str,
    least: int,
    examples: str,
) -> int:
    """The quantity as a whole number of `unit`, at least `least`; refused, saying the
    nearest whole amounts, when it is not one."""
    quantity = _parse(value)
    amount = quantity / unit
    whole = int(amount)
    if amount != whole:
        lower, upper = whole, whole + 1
        nearest = (
            f"{upper}{suffix}" if lower < max(least, 1) else f"{lower}{suffix} or {upper}{suffix}"
        )
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
    return _whole(
        value,
        Decimal("0.001"),
        what="CPU",
        unit_name="millicores",
        suffix="m",
        least=1,
        examples="500m or 2",
    )


def memory_to_mib(value: str | int) -> int:
    return _whole(
        value, MIB, what="memory", unit_name="MiB", suffix="Mi", least=1, examples="512Mi or 4Gi"
    )


def storage_to_gib(value: str | int) -> int:
    """Storage may be 0: a namespace that holds no persistent volumes."""
    return _whole(
        value,
        GIB,
        what="storage",
        unit_name="GiB",
        suffix="Gi",
        least=0,
        examples="10Gi, or 0 for none",
    )


def millis_to_cpu(millis: int) -> str:
    return str(millis // 1000) if millis % 1000 == 0 else f"{millis}m"


def mib_to_memory(mib: int) -> str:
    return f"{mib // 1024}Gi" if mib % 1024 == 0 and mib else f"{mib}Mi"


def gib_to_storage(gib: int) -> str:
    return f"{gib}Gi"


# --- durations (TTLs) -------------------------------------------------------------------------

_DURATION = re.compile(r"(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?")
_UNITS = (("d", 86400), ("h", 3600), ("m", 60), ("s", 1))
MAX_DURATION_SECONDS = 366 * 86400


def duration_to_seconds(value: str | int) -> int:
    """'90m', '2h', '1d12h', '45s' or a number of seconds → seconds."""
    text = str(value).strip().lower()
    match = _DURATION.fullmatch(text)
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


# --- as people read them ---------------------------------------------------------------------

# Stored unit → the friendlier reading beside the Kubernetes quantity: CPU in cores, memory
# and storage in GiB, at most this many decimals.
_READ_AS = {
    "cpu": (Decimal(1000), 3, ("core", "cores"), millis_to_cpu),
    "memory": (Decimal(1024), 2, ("GiB", "GiB"), mib_to_memory),
    "storage": (Decimal(1), 2, ("GiB", "GiB"), gib_to_storage),
    "namespaces": (Decimal(1), 0, ("namespace", "namespaces"), str),
}
_SUFFIX = re.compile(r"(Gi|Mi|m)$")


@dataclass(frozen=True)
class Amount:
    """An amount as Kubernetes writes it ("500m", "1536Mi") and as people read it ("0.5
    cores", "1.5 GiB").

    A quota or what a request asks for is shown as written, the way it is typed into a
    form or a manifest, with the reading beside it where that says more: `written()`
    ("500m (0.5 cores)", "1536Mi (1.5 GiB)", "2Gi", "1 core") and `html()`, which every
    page uses, so every page shows one the same way. Budgets, sums of many namespaces, are
    read in cores and GiB with the exact quantity on hover (`reading_html()`); `bare()`
    drops the unit, for "8.2 of 32 cores"."""

    number: str
    unit: str
    exact: str

    def bare(self) -> Amount:
        return Amount(self.number, "", self.exact)

    def __str__(self) -> str:
        return f"{self.number} {self.unit}" if self.unit else self.number

    @property
    def _reading_adds_nothing(self) -> bool:
        """ "2 GiB" is all of "2Gi" (and "1 core" of "1"): no reading beside it."""
        return _SUFFIX.sub("", self.exact) == self.number

    def written(self) -> str:
        """As Kubernetes writes it, the reading beside it where that says more: "500m (0.5
        cores)", "100Mi (≈0.1 GiB)", "2Gi"; a whole number of cores with its unit, "2
        cores" (a bare "2" would not say what it counts)."""
        if not self._reading_adds_nothing:
            return f"{self.exact} ({self})"
        return self.exact if _SUFFIX.search(self.exact) else str(self)

    def plain(self) -> str:
        """The reading as text where nothing can be hovered (a budget in a refusal): a
        rounded amount says its exact quantity too, "≈0.1 GiB (100Mi)"."""
        return f"{self} ({self.exact})" if self.number.startswith("≈") else str(self)

    def html(self) -> SafeString:
        """`written()` for a page: the reading beside the quantity is muted."""
        if self._reading_adds_nothing:
            return escape(self.written())
        return format_html(
            '<span class="quantity">{} <span class="muted">({})</span></span>',
            self.exact,
            str(self),
        )

    def reading_html(self) -> SafeString:
        """The reading, with the exact quantity on hover: for budgets' figures."""
        if self._reading_adds_nothing:
            return escape(str(self))
        return format_html('<abbr class="quantity" title="{}">{}</abbr>', self.exact, str(self))

    # format_html and conditional_escape take it as its html() (`{{ }}` takes str()).
    __html__ = html


def amount(dimension: str, stored: int) -> Amount:
    """`amount("cpu", 8200)` is written "8200m" and reads "8.2 cores"; `amount("memory",
    16640)` "16640Mi", "16.25 GiB"; a reading rounded starts with "≈"."""
    per_unit, places, (one, many), exact = _READ_AS[dimension]
    value = Decimal(stored) / per_unit
    shown = round(value, places)
    number = f"{shown.normalize():f}" if shown else "0"
    if shown != value:
        number = f"≈{number}"
    return Amount(number, one if value == 1 else many, exact(stored))


# --- what people typed ------------------------------------------------------------------------

# Payload keys stored in Berth's integer units, shown back as Kubernetes quantities.
_FOR_PEOPLE = {
    "cpu_millis": ("cpu", "cpu"),
    "memory_mib": ("memory", "memory"),
    "storage_gib": ("storage", "storage"),
}
# Payload keys holding one of Berth's choices: shown by their label.
_CHOICES = {"engine": dict(GitOpsEngine.choices), "cause": dict(EndCause.choices)}

# What a request is about comes first; then how much of everything it asks for.
_NAMING_KEYS = (
    "app",
    "project",
    "namespace",
    "role",
    "tier",
    "tiers",
    "cluster",
    "env_slug",
)


def payload_items(payload: dict) -> list[tuple[str, object]]:
    """A request's payload as people typed it: `cpu_millis: 500` is `cpu: 500m (0.5 cores)`
    (an Amount), `memory_mib: 2048` `memory: 2Gi`, `ttl_seconds: 7200` `ttl: 2h`, a list of
    tiers "dev, staging, prod", an engine its label ("Argo CD + Kargo")."""
    first = [key for key in _NAMING_KEYS if key in payload]
    items = []
    for key, value in [(k, payload[k]) for k in first] + [
        (k, v) for k, v in payload.items() if k not in first
    ]:
        number = isinstance(value, int) and not isinstance(value, bool)
        if key in _FOR_PEOPLE and number:
            name, dimension = _FOR_PEOPLE[key]
            items.append((name, amount(dimension, value)))
        elif key == "ttl_seconds" and number:
            items.append(("ttl", seconds_to_duration(value)))
        elif key == "minutes" and number:  # how long an access grant lasts
            items.append(("duration", seconds_to_duration(value * 60)))
        elif key in _CHOICES and isinstance(value, str):
            items.append((key, _CHOICES[key].get(value, value)))
        elif isinstance(value, list | tuple):
            items.append((key, ", ".join(map(str, value))))
        else:
            items.append((key, value))
    return items


def payload_for_people(payload: dict) -> dict[str, str]:
    """payload_items as plain text, for e-mails: `{"cpu": "500m (0.5 cores)", ...}`."""
    return {
        key: value.written() if isinstance(value, Amount) else str(value)
        for key, value in payload_items(payload)
    }


def payload_as_written(payload: dict) -> dict[str, object]:
    """A request's payload with quantities as Kubernetes writes them (`cpu: 500m`, `memory:
    16640Mi`): exact, for exports that are read again."""
    written: dict[str, object] = {}
    for key, value in payload_items(payload):
        if isinstance(value, Amount):
            written[key] = value.exact
        else:  # lists and choices as stored; a TTL as a duration ("2h")
            written[key] = payload.get(key, value)
    return written
