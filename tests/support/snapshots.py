"""Worlds built once per test process, given back to each test that takes them.

The first test of a process that takes a world builds it (seeds the demo, provisions its
projects...) inside its own transaction; what that wrote is remembered: the rows of every
table the building changed, and the stand-in's objects and the repositories where the world
has them. Each later test gets those back instead of building the world again: the rows
written into its transaction (rolled back with it, as the building would have been), the
stand-in and the repositories put back as they were. What the test then does is its own.

A world built while the clock is moved (time-machine) is built as it always was, and not
remembered: its rows carry that clock's moments.
"""

from __future__ import annotations

import datetime
import shutil
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import time_machine
from django.apps import apps
from django.core.management.color import no_style
from django.db import connection, transaction

from kubesandbox import KubeSandbox


@dataclass(frozen=True)
class _Table:
    name: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]


# Django's own bookkeeping, which no world's building changes (and whose ids Django caches).
_DJANGOS_OWN = frozenset({"django_content_type", "auth_permission", "django_session"})


def _tables() -> list[str]:
    return sorted(connection.introspection.django_table_names(only_existing=True))


def _read(tables: Iterable[str]) -> dict[str, _Table]:
    read = {}
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        for table in tables:
            cursor.execute(f"SELECT * FROM {quote(table)}")  # noqa: S608 - Django's own tables
            columns = tuple(column[0] for column in cursor.description)
            rows = (tuple(map(_writable, row)) for row in cursor.fetchall())
            read[table] = _Table(table, columns, tuple(sorted(rows, key=repr)))
    return read


def _writable(value: Any) -> Any:
    """SQLite reads a TIME column back as a `datetime.time`, which it cannot be given."""
    return value.isoformat() if isinstance(value, datetime.time) else value


@dataclass(frozen=True)
class DatabaseState:
    """The tables of a world, as its building left them."""

    tables: tuple[_Table, ...]

    @classmethod
    def around(cls, build: Callable[[], object]) -> DatabaseState:
        """The tables `build` changed, and those that held rows before it (the data
        migrations' approval rules, which a transactional test's flush writes back with
        other ids, and which the world's rows may point at): given back whole."""
        names = [name for name in _tables() if name not in _DJANGOS_OWN]
        before = _read(names)
        build()
        after = _read(names)
        return cls(tuple(after[n] for n in names if after[n].rows or before[n].rows))

    def write_back(self) -> None:
        """Every changed table as the building left it. Foreign keys are checked at commit
        (Django makes them deferrable), so the order of the tables does not matter."""
        quote = connection.ops.quote_name
        # In one transaction (a savepoint inside a test's own): a test that commits as it
        # goes would have every DELETE checked against rows not yet written back.
        with transaction.atomic(), connection.cursor() as cursor:
            for table in self.tables:
                cursor.execute(f"DELETE FROM {quote(table.name)}")  # noqa: S608
                if table.rows:
                    columns = ", ".join(quote(column) for column in table.columns)
                    marks = ", ".join(["%s"] * len(table.columns))
                    cursor.executemany(
                        f"INSERT INTO {quote(table.name)} ({columns}) VALUES ({marks})",  # noqa: S608
                        table.rows,
                    )
            # PostgreSQL's sequences do not follow ids written by hand: set them past them.
            models = [m for m in apps.get_models() if m._meta.db_table in self._names()]
            for statement in connection.ops.sequence_reset_sql(no_style(), models):
                cursor.execute(statement)

    def _names(self) -> set[str]:
        return {table.name for table in self.tables}


@dataclass
class World:
    """What one world's building left: rows, the stand-in's objects, repositories' files."""

    database: DatabaseState
    sandbox: tuple[KubeSandbox, bytes] | None = None
    repositories: dict[Path, Path] = field(default_factory=dict)

    def give_back(self) -> None:
        self.database.write_back()
        if self.sandbox is not None:
            stand_in, objects = self.sandbox
            stand_in.restore(objects)
        for live, kept in self.repositories.items():
            shutil.rmtree(live, ignore_errors=True)
            shutil.copytree(kept, live, symlinks=True)


_WORLDS: dict[object, World] = {}


def built_once(
    key: object,
    build: Callable[[], object],
    *,
    sandbox: KubeSandbox | None = None,
    repositories: Iterable[Path] = (),
    keep: Path | None = None,
) -> None:
    """Build the world the first time a process asks for `key`; give it back (rows, the
    `sandbox`'s objects, the `repositories`' files, copied under `keep`) each time after.
    The test reads its objects from the database afterwards, never from a test before it.

    `key` must name everything the building depends on that a test can change (the
    stand-in's address, the repositories' paths): the same key is the same world."""
    if time_machine.escape_hatch.is_travelling():
        build()
        return
    world = _WORLDS.get(key)
    # A stand-in of a test's own, stopped since, whose port a later one was given: not it.
    if world is not None and (world.sandbox and world.sandbox[0]) is sandbox:
        world.give_back()
        return
    world = World(DatabaseState.around(build))
    if sandbox is not None:
        world.sandbox = (sandbox, sandbox.snapshot())
    for live in repositories:
        assert keep is not None, "repositories are kept under `keep`"
        keep.mkdir(parents=True, exist_ok=True)
        kept = Path(tempfile.mkdtemp(dir=keep)) / live.name
        shutil.copytree(live, kept, symlinks=True)
        world.repositories[live] = kept
    _WORLDS[key] = world
