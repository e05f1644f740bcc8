"""Every data migration that writes rows the tests rely on (the default approval rules) is
one the suite puts back after a transactional test's flush (tests/conftest.py): a new one
left out would leave the tests after such a test without its rows, on one database and
ordering but not another."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import DATA_MIGRATIONS

MIGRATIONS = Path(__file__).resolve().parents[2] / "tenants" / "migrations"


def test_every_migration_that_creates_default_rows_is_put_back():
    writing = sorted(
        path.stem
        for path in MIGRATIONS.glob("0*.py")
        if "ApprovalRule.objects.get_or_create" in path.read_text()
    )
    assert writing, "no data migration found: is the folder above right?"
    assert sorted(DATA_MIGRATIONS) == writing
