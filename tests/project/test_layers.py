"""The import contracts cover the whole domain: every module of `tenants` sits in one of the
domain's layers (pyproject.toml), so a new module cannot import upwards unnoticed, and the
no-cycles contract counts imports made only for type annotations."""

from __future__ import annotations

import pkgutil
import re
import tomllib
from pathlib import Path

import tenants

ROOT = Path(__file__).resolve().parents[2]
CONTRACTS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]


def domain_layers() -> str:
    (rooms,) = [c for c in CONTRACTS["contracts"] if c["name"].startswith("Domain rooms")]
    return " ".join(rooms["layers"])


def test_every_module_of_the_domain_sits_in_a_layer():
    layered = set(re.findall(r"tenants\.([a-z_]+)", domain_layers()))
    modules = {info.name for info in pkgutil.iter_modules(tenants.__path__)}
    assert modules - layered == set(), "add these to a layer of the Domain rooms contract"
    assert layered - modules == set(), "these layers name modules that are gone"


def test_cycles_hidden_behind_type_checking_imports_count():
    assert CONTRACTS["exclude_type_checking_imports"] is False
