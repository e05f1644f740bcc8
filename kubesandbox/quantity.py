"""Resource quantities as Kubernetes adds and prints them (``resource.Quantity``).

A quantity keeps the format it was written in (binary ``Ki``..``Ei``, decimal ``n``..``E``, or
an exponent ``1e3``); a sum takes the format of its first non-zero term, and is printed in
canonical form: the largest suffix that leaves a whole number (``1536Mi``, ``1500m``, ``2k``),
binary amounts under 1024 or not whole in decimal form, values finer than ``1n`` rounded up.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction

BINARY, DECIMAL, EXPONENT = "BinarySI", "DecimalSI", "DecimalExponent"
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_SUFFIX_OF = {power: suffix for suffix, power in _DECIMAL.items()}
_FORM = re.compile(r"^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(.*)$")


@dataclass(frozen=True)
class Quantity:
    value: Fraction
    format: str = DECIMAL

    def __add__(self, other: Quantity) -> Quantity:
        return Quantity(self.value + other.value, self.format if self.value else other.format)

    def __str__(self) -> str:
        return canonical(self)


ZERO = Quantity(Fraction(0))


def parse(text: object) -> Quantity:
    """``text`` as a Quantity; what does not parse (the stand-in refuses it on write) is zero."""
    match = _FORM.match(str(text).strip())
    if not match:
        return ZERO
    number, suffix = Fraction(match.group(1)), match.group(2)
    if suffix in _BINARY:
        return Quantity(number * 2 ** _BINARY[suffix], BINARY)
    if suffix in _DECIMAL:
        return Quantity(number * Fraction(10) ** _DECIMAL[suffix], DECIMAL)
    if suffix[:1] in ("e", "E") and re.fullmatch(r"[+-]?\d+", suffix[1:]):
        return Quantity(number * Fraction(10) ** int(suffix[1:]), EXPONENT)
    return ZERO


def total(quantities: list[Quantity]) -> Quantity:
    result = ZERO
    for quantity in quantities:
        result = result + quantity
    return result


def canonical(quantity: Quantity) -> str:
    # Nothing is finer than a nano-unit: round up to it (away from zero).
    value = quantity.value
    nanos = math.ceil(abs(value) * 10**9) * (1 if value >= 0 else -1)
    if nanos == 0:
        return "0"
    sign, nanos = ("-" if nanos < 0 else ""), abs(nanos)
    if quantity.format == BINARY and nanos >= 1024 * 10**9 and nanos % 10**9 == 0:
        whole, shift = nanos // 10**9, 0
        while shift < 60 and whole % (1 << (shift + 10)) == 0:
            shift += 10
        suffix = next((s for s, p in _BINARY.items() if p == shift), "")
        return f"{sign}{whole >> shift}{suffix}"
    power = -9
    while power < 18 and nanos % 10 ** (power + 12) == 0:
        power += 3
    mantissa = nanos // 10 ** (power + 9)
    if quantity.format == EXPONENT:
        return f"{sign}{mantissa}" + (f"e{power}" if power else "")
    return f"{sign}{mantissa}{_SUFFIX_OF[power]}"
