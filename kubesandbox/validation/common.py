"""What the validation modules share: causes, fieldValidation modes, quantities, paths."""

from __future__ import annotations

import re
from typing import Any

from ..errors import ApiError
from ..resources import ResourceType

Cause = tuple[str, str, str]  # (reason, field, message), e.g. FieldValueInvalid
STRICT, WARN, IGNORE = "Strict", "Warn", "Ignore"

# What Go's resource.ParseQuantity accepts, and the words of its error.
_QUANTITY = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)(([KMGTPE]i)|[numkMGTPE]|[eE][+-]?\d+)?$")
QUANTITY_MESSAGE = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)


def is_quantity(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return True
    return isinstance(value, str) and bool(_QUANTITY.match(value))


def dotted(path: Any) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def decode_error(rt: ResourceType, message: str) -> ApiError:
    return ApiError(
        400, f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}: {message}'
    )
