"""docs/architecture.md walks a request through Berth naming the functions it passes: each
name must still exist where the page says, or the page has gone stale."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"
ROOTS = ("portal", "tenants", "provisioning", "kubesandbox")
DOTTED = re.compile(r"`((?:" + "|".join(ROOTS) + r")(?:\.[A-Za-z_][A-Za-z0-9_]*)+)`")


def resolve(dotted: str) -> object:
    """Import the longest module prefix of `dotted`, then follow attributes."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[cut:]:
            found = getattr(found, attribute)
        return found
    raise ModuleNotFoundError(dotted)


NAMES = sorted(set(DOTTED.findall(PAGE.read_text())))


def test_the_page_names_functions():
    assert len(NAMES) > 30


@pytest.mark.parametrize("dotted", NAMES)
def test_every_name_on_the_architecture_page_exists(dotted):
    resolve(dotted)
