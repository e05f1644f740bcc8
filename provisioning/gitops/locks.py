"""The per-repository lock, across worker processes: a PostgreSQL advisory lock, or an
flock(2) on a file in the data directory when the database is SQLite (one host).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import logging
import os
import time
from collections.abc import Iterator

from django.db import DatabaseError, connection, transaction

from provisioning.gitops.remote import GitError, Remote, state_dir

logger = logging.getLogger(__name__)


@contextlib.contextmanager
def repo_lock(remote: Remote, *, timeout: float) -> Iterator[None]:
    """Only one writer per repository at a time, across processes (and hosts on PostgreSQL)."""
    if connection.vendor == "postgresql":
        with _advisory_lock(remote.lock_name, timeout):
            yield
    else:
        with _file_lock(remote.lock_name, timeout):
            yield


@contextlib.contextmanager
def _advisory_lock(name: str, timeout: float) -> Iterator[None]:
    key = int.from_bytes(hashlib.sha256(f"berth-gitops:{name}".encode()).digest()[:8], "big")
    key -= 2**63 if key >= 2**63 else 0  # bigint
    try:
        # A savepoint when the caller is in a transaction, so a timeout spoils nothing.
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(
                "SELECT set_config('lock_timeout', %s, true)", [f"{int(timeout * 1000)}ms"]
            )
            cursor.execute("SELECT pg_advisory_lock(%s)", [key])
    except DatabaseError as exc:
        raise GitError(
            f"another worker kept this repository locked for more than {timeout:.0f}s",
            transient=True,
        ) from exc
    try:
        yield
    finally:
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s)", [key])
        except DatabaseError:  # the session is gone, and its lock with it
            logger.warning("GitOps: could not release the repository lock; its session ended")


@contextlib.contextmanager
def _file_lock(name: str, timeout: float) -> Iterator[None]:
    directory = state_dir() / "locks"
    directory.mkdir(exist_ok=True)
    fd = os.open(directory / f"{name[:32]}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        deadline = time.monotonic() + timeout
        delay = 0.002
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise GitError(
                        f"another worker kept this repository locked for more than {timeout:.0f}s",
                        transient=True,
                    ) from None
                time.sleep(delay)
                delay = min(delay * 2, 0.05)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
