"""docs/architecture.md walks a request through Berth naming the functions it passes: each
name must still exist where the page says, or the page has gone stale."""

from __future__ import annotations

import importlib
import pkgutil
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


# The rooms whose every module the picture must show: a module added to one of them without a
# word on the page fails here, so the picture cannot drift from the code again.
PICTURED_PACKAGES = (
    "tenants.services",
    "tenants.selectors",
    "tenants.kinds",
    "provisioning.jobs",
    "provisioning.reconcile",
    "provisioning.records",
)


def picture() -> str:
    """The page's first code block: the drawing of the rooms."""
    return PAGE.read_text().split("```", 2)[1]


def modules_of(package: str) -> list[str]:
    found = importlib.import_module(package)
    return sorted(
        info.name for info in pkgutil.iter_modules(found.__path__) if not info.name.startswith("_")
    )


@pytest.mark.parametrize("package", PICTURED_PACKAGES)
def test_the_picture_shows_every_module_of_the_rooms_it_draws(package):
    drawn = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", picture()))
    missing = [name for name in modules_of(package) if name not in drawn]
    assert modules_of(package), f"{package} has no modules: is the list above stale?"
    assert not missing, f"docs/architecture.md's picture does not show {package}: {missing}"
