"""What the store's neighbours may do with it: the sandbox's controllers, the authorizer and
admission read live objects under its lock and write as a controller would.

A Protocol, so that they name the store without importing it (the store runs them)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Protocol

from .resources import Registry, ResourceType


class ControlledStore(Protocol):
    """The store as its controllers, the authorizer and admission see it."""

    registry: Registry

    @property
    def lock(self) -> threading.RLock: ...

    def stored(self, group: str, plural: str, namespace: str | None = None) -> list[dict]: ...

    def stored_object(self, group: str, plural: str, namespace: str, name: str) -> dict | None: ...

    def write_internal(self, rt: ResourceType, obj: dict) -> None: ...

    def remove_all(self, group: str, plural: str) -> None: ...


# Runs after each committed write, inside the store's lock: (store, type, object, deleted).
Controller = Callable[[ControlledStore, ResourceType, dict, bool], None]
