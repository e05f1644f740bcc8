"""The migrated test database, built once and copied into each test process.

Migrating an empty database takes seconds (7 s on SQLite and on PostgreSQL), and every
pytest-xdist worker of every run did it again. The first process to need it migrates as
before and keeps a copy, named by what the schema is made of (every migration file of every
installed app, Django's version and the database's); any process after that copies it:

- SQLite (in memory): a file in `.cache/test-databases/`, copied with SQLite's backup API;
- PostgreSQL: a database `test_<database>_template_<name>` beside the test databases,
  which a worker's test database is created from (CREATE DATABASE … TEMPLATE).

A changed migration makes a new name, so a stale copy is never used; on PostgreSQL the
copies of other names are dropped when a new one is kept.
"""

from __future__ import annotations

import fcntl
import hashlib
import inspect
import os
import re
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from unittest import mock

import django
from django.core import management
from django.db import DatabaseError, connections

CACHE = Path(
    os.environ.get("BERTH_TEST_DATABASES")
    or Path(__file__).resolve().parents[2] / ".cache" / "test-databases"
)


def _in_memory_sqlite(alias: str) -> bool:
    connection = connections[alias]
    return connection.vendor == "sqlite" and connection.is_in_memory_db()


def schema_key(alias: str = "default") -> str:
    """What the migrated database is made of: it changes whenever a migration does."""
    from django.db.migrations.loader import MigrationLoader

    connection = connections[alias]
    server = sqlite3.sqlite_version if connection.vendor == "sqlite" else connection.pg_version
    digest = hashlib.sha256(f"{django.__version__} {connection.vendor} {server}".encode())
    loader = MigrationLoader(None, ignore_no_migrations=True)
    for key, migration in sorted(loader.disk_migrations.items()):
        digest.update(repr(key).encode())
        digest.update(Path(inspect.getfile(type(migration))).read_bytes())
    return digest.hexdigest()[:24]


def kept_database() -> Path:
    """Where the migrated database of the schema as it is now is kept."""
    return CACHE / f"{schema_key()}.sqlite3"


@contextmanager
def _one_at_a_time() -> Iterator[None]:
    """One process migrates while the others wait for its copy, instead of all migrating."""
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _migrate_or_copy(call_command, name: str, *args, **options):
    alias = options.get("database", "default")
    if name == "migrate" and _in_memory_sqlite(alias):
        return _sqlite(call_command, alias, name, *args, **options)
    if name == "migrate" and connections[alias].vendor == "postgresql":
        return _postgresql(call_command, alias, name, *args, **options)
    return call_command(name, *args, **options)


def _sqlite(call_command, alias: str, *args, **options):
    template = kept_database()
    live = connections[alias]
    live.ensure_connection()
    with _one_at_a_time():
        if template.exists():
            kept = sqlite3.connect(template)
            kept.backup(live.connection)  # page by page, SQLite's backup API
            kept.close()
            return None
        result = call_command(*args, **options)
        building = template.with_suffix(f".{os.getpid()}.building")
        copy = sqlite3.connect(building)
        live.connection.backup(copy)
        copy.close()
        building.replace(template)  # whole or not at all, for the processes waiting on it
        return result


def _postgresql(call_command, alias: str, *args, **options):
    live = connections[alias]
    quote = live.ops.quote_name
    test_database = live.settings_dict["NAME"]
    # Of this database's test databases (pytest-xdist's workers' end in _gw0, _gw1, ...).
    prefix = re.sub(r"_gw\d+$", "", test_database) + "_template_"
    template = prefix + schema_key(alias)
    with _one_at_a_time():
        live.close()  # a database is copied, or copied from, only with nobody connected
        with live._nodb_cursor() as cursor:
            cursor.execute(
                "SELECT datname FROM pg_database WHERE starts_with(datname, %s)", [prefix]
            )
            kept = {row[0] for row in cursor.fetchall()}
            if template in kept:
                cursor.execute(f"DROP DATABASE {quote(test_database)}")
                cursor.execute(f"CREATE DATABASE {quote(test_database)} TEMPLATE {quote(template)}")
                return None
        result = call_command(*args, **options)
        live.close()
        with live._nodb_cursor() as cursor:
            for stale in kept:
                # Another run, of other migrations, may be copying it now: left to a later run.
                with suppress(DatabaseError):
                    cursor.execute(f"DROP DATABASE IF EXISTS {quote(stale)}")
            cursor.execute(f"CREATE DATABASE {quote(template)} TEMPLATE {quote(test_database)}")
        return result


@contextmanager
def _migrated_from_template() -> Iterator[None]:
    real = management.call_command
    with mock.patch.object(
        management, "call_command", lambda *a, **kw: _migrate_or_copy(real, *a, **kw)
    ):
        yield


def install() -> None:
    """While pytest-django sets the test databases up (it calls Django's setup_databases),
    an in-memory SQLite one is copied, not migrated; a test's own migrate is left alone."""
    from django.test import utils

    setup_databases = utils.setup_databases

    def set_up(*args, **kwargs):
        with _migrated_from_template():
            return setup_databases(*args, **kwargs)

    utils.setup_databases = set_up
