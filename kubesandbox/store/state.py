"""What the store's parts (``commits``, ``apply``, ``namespaces``, ``persistence``) need of
the store they are mixed into: its lock-held state and each other's steps.

A Protocol, so that each part names the store without importing it (the store imports
them). Every step here runs with the store's lock held."""

from __future__ import annotations

import threading
from collections.abc import Hashable
from pathlib import Path
from typing import Protocol

from .. import fields
from ..objects import AdmissionHook, Key, WriteContext
from ..resources import ResourceType
from ..storeview import ControlledStore, Controller
from ..watch import EventLog
from .index import ObjectIndex


class StoreState(ControlledStore, Protocol):
    events: EventLog
    admission: AdmissionHook | None
    controllers: list[Controller]
    termination_seconds: float
    state_file: Path | None
    _lock: threading.RLock
    _objects: ObjectIndex
    _resource_version: int
    _terminating: dict[str, float]
    _seed_key: Hashable | None
    _seed_namespaces: tuple[str, ...]

    # the store itself
    def _forget_all(self, *, keep_crds: bool = False) -> None: ...

    # commits
    def _existing(self, rt: ResourceType, namespace: str | None, name: str) -> dict: ...

    def _check_can_create(self, rt: ResourceType, namespace: str | None, name: str) -> None: ...

    def _check_precondition(self, rt: ResourceType, existing: dict, new: dict) -> None: ...

    def _create(
        self,
        rt: ResourceType,
        obj: dict,
        owners: fields.Owners,
        dry_run: bool,
        ctx: WriteContext | None = None,
    ) -> dict: ...

    def _update(
        self,
        rt: ResourceType,
        existing: dict,
        new: dict,
        owner: fields.OwnerKey,
        dry_run: bool,
        owners: fields.Owners | None = None,
        ctx: WriteContext | None = None,
    ) -> dict: ...

    def _commit(self, rt: ResourceType, obj: dict, old: dict | None = None) -> None: ...

    def _remove(self, rt: ResourceType | None, key: Key) -> None: ...

    # namespaces
    def _reap(self) -> None: ...

    # persistence
    def _persist(self) -> None: ...

    def _restore(self, resource_version: int, objects: list[dict]) -> None: ...
