"""The API reads JSON only, and only so much of it: a body longer than
BERTH_API_MAX_BODY_BYTES is 413 and one nested deeper than MAX_DEPTH is 400, both before
the JSON decoder sees it (Python's decoder recurses: a body of 5,000 nested arrays would be
a RecursionError, a 500). tenants.api.middleware refuses what a Content-Length announces as
too long before anything else runs; the parser counts what actually arrives."""

from __future__ import annotations

import io
from typing import Any

from django.conf import settings
from rest_framework import exceptions, parsers, status

# Berth's own bodies nest four levels (a request's payload's list of tiers); rules five.
MAX_DEPTH = 32


class PayloadTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "payload_too_large"
    problem = "payload-too-large"


def too_large_detail(limit: int) -> str:
    return f"The body is longer than the API takes ({limit} bytes at most)."


def nesting_depth(data: bytes, *, stop_after: int) -> int:
    """How deep JSON arrays and objects nest in `data`, counted without decoding it (strings
    skipped, escapes honoured); counting stops once it passes `stop_after`."""
    depth = deepest = 0
    in_string = escaped = False
    for byte in data:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):  # [ {
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > stop_after:
                    break
        elif byte in (0x5D, 0x7D):  # ] }
            depth -= 1
    return deepest


class JSONParser(parsers.JSONParser):
    def parse(
        self, stream: Any, media_type: str | None = None, parser_context: dict | None = None
    ) -> Any:
        limit = settings.BERTH_API_MAX_BODY_BYTES
        data = stream.read(limit + 1) if stream is not None else b""
        if len(data) > limit:
            raise PayloadTooLarge(too_large_detail(limit))
        depth = nesting_depth(data, stop_after=MAX_DEPTH)
        if depth > MAX_DEPTH:
            raise exceptions.ParseError(
                f"The JSON body nests deeper than the API reads ({MAX_DEPTH} levels at most)."
            )
        parsed = super().parse(io.BytesIO(data), media_type, parser_context)
        if not _valid_unicode(parsed):
            raise exceptions.ParseError(
                "The JSON body holds text that is not valid Unicode (an unpaired surrogate "
                "escape such as \\ud800)."
            )
        return parsed


def _valid_unicode(value: Any) -> bool:
    """No string in the parsed body holds an unpaired surrogate (JSON's \\ud800 escape
    decodes to one): such text cannot be stored, logged or answered in UTF-8."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return False
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return True
