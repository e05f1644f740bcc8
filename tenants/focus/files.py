"""FOCUS rows (tenants.focus.rows) as files, in UTF-8, a chunk of rows at a time: CSV as RFC
4180 has it, or a JSON array of objects. Each distinct cell is written once: most repeat
from row to row (the account, the month, the service, a namespace's tenant and tags)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from json.encoder import encode_basestring

from tenants.focus.columns import COLUMNS, DECIMAL, JSON, NAMES
from tenants.focus.rows import Row

CHUNK = 1000  # rows written at a time: enough to be quick, few enough to stay in the cache


class _Written(dict[str | None, str]):
    """Cells as `write` writes them, each written on first sight; None is `null`."""

    def __init__(self, write: Callable[[str], str], null: str) -> None:
        super().__init__({None: null})
        self.write = write

    def __missing__(self, text: str) -> str:
        self[text] = written = self.write(text)
        return written


def _csv_cell(text: str) -> str:
    if "," in text or '"' in text or "\n" in text or "\r" in text:
        return '"' + text.replace('"', '""') + '"'
    return text


def csv_chunks(found: list[Row]) -> Iterator[bytes]:
    """A header of the column names, then a line per row, each ending in CRLF; a null is
    an empty cell; a cell with a comma, a quote or a line break is quoted, its quotes
    doubled, so that no cell can end a cell or a line early."""
    cell = _Written(_csv_cell, "").__getitem__
    yield (",".join(NAMES) + "\r\n").encode()
    for first in range(0, len(found), CHUNK):
        lines = [",".join(map(cell, row)) for row in found[first : first + CHUNK]]
        yield ("\r\n".join(lines) + "\r\n").encode()


# An object's text around its members' values: '{"BilledCost":', ',"BillingAccountId":', …,
# '}'. Strings are JSON strings (as json.dumps writes them without ensure_ascii); decimals
# are JSON numbers and JSON columns objects: their text as it is.
_AROUND = [
    ("," if index else "{") + encode_basestring(name) + ":" for index, name in enumerate(NAMES)
]
_AROUND.append("}")
_AS_IS = tuple(
    (index, 2 * index + 1) for index, column in enumerate(COLUMNS) if column.kind in (DECIMAL, JSON)
)


def json_chunks(found: list[Row]) -> Iterator[bytes]:
    """An array of an object per row, its members the columns in their order: decimals
    as JSON numbers written digit for digit, Tags as an object, a null as null."""
    string = _Written(encode_basestring, "null").__getitem__
    parts = [""] * (2 * len(_AROUND) - 1)
    parts[0::2] = _AROUND
    yield b"["
    for first in range(0, len(found), CHUNK):
        objects = []
        for row in found[first : first + CHUNK]:
            parts[1::2] = map(string, row)
            for index, part in _AS_IS:
                parts[part] = row[index] or "null"
            objects.append("".join(parts))
        yield (("," if first else "") + ",".join(objects)).encode()
    yield b"]"
