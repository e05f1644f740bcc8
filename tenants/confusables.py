"""Names that pass for others (Unicode TR39, "Unicode Security Mechanisms"), by ICU's
SpoofChecker, the reference implementation: `pаyments-owners` with a Cyrillic а is a
different group from `payments-owners` to the identity provider and the cluster, and the
same one to whoever reads a RoleBinding."""

from __future__ import annotations

from functools import lru_cache

import icu

# TR39's restriction levels: "highly restrictive" lets a name be written in one script, or in
# Latin with Han and Japanese kana, Han and Bopomofo, or Han and Hangul, as people write
# those languages; anything else mixing scripts (Latin with Cyrillic or Greek) is refused.
_checker = icu.SpoofChecker()
_checker.setChecks(icu.USpoofChecks.RESTRICTION_LEVEL)
_checker.setRestrictionLevel(icu.URestrictionLevel.HIGHLY_RESTRICTIVE)
_NO_SCRIPT = {"Common", "Inherited", "Unknown"}


@lru_cache(maxsize=4096)
def skeleton(text: str) -> str:
    """TR39's skeleton: two strings that look alike have the same one."""
    return _checker.getSkeleton(0, text)


def mixed_scripts(text: str) -> list[str]:
    """The scripts `text` mixes, in the order they appear (e.g. ["Latin", "Cyrillic"]), when
    TR39 mixed-script detection refuses it; [] when it is written in one script."""
    if not _checker.check(text) & icu.USpoofChecks.RESTRICTION_LEVEL:
        return []
    scripts = [icu.Script.getScript(char).getName() for char in text]
    return list(dict.fromkeys(name for name in scripts if name not in _NO_SCRIPT))


def lookalike(name: str, others: list[str], *, ignore_case: bool = False) -> str | None:
    """The first of `others` that `name` looks like without being it."""
    fold = str.casefold if ignore_case else str
    own = skeleton(fold(name))
    return next((other for other in others if other != name and skeleton(fold(other)) == own), None)
