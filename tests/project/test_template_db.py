"""The suite's test database is copied from a kept, migrated one
(tests/support/template_db.py): the copy must be the database migrate makes, on SQLite and
on PostgreSQL, and a changed migration must never be given an old copy."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from django.db import connection

from tests.support import template_db
from tests.support.commands import PYTHON, ROOT, clean_environment

TENANTS_MIGRATIONS = ROOT / "tenants" / "migrations"
# A process that sets the test database up as the suite does, writes down its tables,
# columns, constraints and rows (but when they were written), and drops it again.
SET_UP_AND_DESCRIBE = """
import datetime, json, sys, django
django.setup()
from django.db import connection
from django.test import utils
from tests.support import template_db
template_db.install()
databases = utils.setup_databases(verbosity=0, interactive=False)
described = {}
with connection.cursor() as cursor:
    for table in sorted(connection.introspection.table_names(cursor)):
        columns = connection.introspection.get_table_description(cursor, table)
        constraints = connection.introspection.get_constraints(cursor, table)
        cursor.execute(f'SELECT * FROM "{table}"')
        rows = sorted(
            repr(["..." if isinstance(v, datetime.datetime) else v for v in row])
            for row in cursor.fetchall()
        )
        described[table] = {
            "columns": [repr(column[:2]) for column in columns],
            "constraints": sorted(repr(sorted(c.items())) for c in constraints.values()),
            "rows": rows,
        }
utils.teardown_databases(databases, verbosity=0)
open(sys.argv[1], "w").write(json.dumps(described))
"""


def _set_up(tmp_path, **environment: str) -> dict:
    described = tmp_path / f"described-{len(list(tmp_path.glob('*.json')))}.json"
    subprocess.run(
        [PYTHON, "-c", SET_UP_AND_DESCRIBE, str(described)],
        cwd=ROOT,
        env=clean_environment(
            DJANGO_SETTINGS_MODULE="tests.settings",
            BERTH_TEST_DATABASES=str(tmp_path / "kept"),
            **environment,
        ),
        check=True,
        capture_output=True,
    )
    return json.loads(described.read_text())


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request, django_db_blocker):
    """Where the processes set their test databases up: SQLite in memory, or a PostgreSQL
    database of this test's own on the server the suite runs on."""
    if request.param == "sqlite":
        yield {}
        return
    if connection.vendor != "postgresql":
        pytest.skip("needs DATABASE_URL (PostgreSQL): make test uses it when set, as CI does")
    name = f"berth_template_check_{os.getpid()}"
    yield {"DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{name}"}
    with django_db_blocker.unblock(), connection._nodb_cursor() as cursor:
        cursor.execute(
            "SELECT datname FROM pg_database WHERE starts_with(datname, %s)", [f"test_{name}"]
        )
        for (left,) in cursor.fetchall():
            cursor.execute(f'DROP DATABASE "{left}"')


@pytest.mark.processes
def test_the_copied_test_database_is_the_one_migrate_makes(database, tmp_path):
    # The first process runs Django's migrate and keeps a copy of what it made; the second
    # is given that copy.
    migrated = _set_up(tmp_path, **database)
    assert any(migrated["tenants_approvalrule"]["rows"]), "the data migrations' rules count"
    assert [path.suffix for path in (tmp_path / "kept").glob("*.sqlite3")] == (
        [".sqlite3"] if not database else []
    ), "kept on SQLite as a file, on PostgreSQL as a database"

    copied = _set_up(tmp_path, **database)

    assert copied == migrated


def test_a_changed_migration_is_never_given_an_old_copy(db, tmp_path, monkeypatch, settings):
    copied = tmp_path / "copied_tenants_migrations"
    shutil.copytree(TENANTS_MIGRATIONS, copied, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.syspath_prepend(tmp_path)
    as_committed = template_db.schema_key()
    try:
        settings.MIGRATION_MODULES = {"tenants": "copied_tenants_migrations"}
        assert template_db.schema_key() == as_committed, "the same migrations, wherever they lie"

        with (copied / "0004_default_approval_rules.py").open("a") as migration:
            migration.write("\n# a rule's wording changed\n")
        assert template_db.schema_key() != as_committed
    finally:
        for name in [name for name in sys.modules if name.startswith("copied_tenants_")]:
            del sys.modules[name]
