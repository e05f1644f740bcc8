"""Characters no one types, refused wherever text crosses into Berth (a URL's path and query
string, a form's fields) before anything looks it up, stores it or logs it.

PostgreSQL refuses NUL in text outright (a server error, had it reached the database); the
other control characters (Unicode category Cc) move a terminal's cursor or colour its text
when someone reads a log, and bidirectional controls reorder what a reader sees of a name.
Multi-line text (known_hosts lines, keys, descriptions) may hold tabs and line breaks, and
the bidirectional marks of right-to-left prose."""

from __future__ import annotations

import re

# Cc is exactly U+0000–U+001F and U+007F–U+009F; the bidirectional formatting characters
# (Cf) are the Arabic letter mark, the LRM/RLM marks, the embeddings, overrides and isolates.
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_SINGLE_LINE = re.compile(f"[\x00-\x1f\x7f-\x9f{_BIDI}]")
_MULTI_LINE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_BIDI_CHARACTER = re.compile(f"[{_BIDI}]")


def control_character(text: str, *, multiline: bool = False) -> str | None:
    """What the first character of `text` that has no place in it is, e.g. "a control
    character (U+0000)"; None when there is none."""
    found = (_MULTI_LINE if multiline else _SINGLE_LINE).search(text)
    if found is None:
        return None
    char = found.group()
    kind = (
        "a bidirectional control character"
        if _BIDI_CHARACTER.match(char)
        else "a control character"
    )
    return f"{kind} (U+{ord(char):04X})"
