"""The state file (a developer sandbox's objects survive restarts) and snapshots (a test
suite's world built once, restored for each test)."""

from __future__ import annotations

import json
import marshal
import os
import sys
from collections.abc import Hashable
from pathlib import Path
from typing import ClassVar

from ..objects import object_key
from ..resources import ResourceType
from ..watch import Event
from .state import StoreState


class Persistence:
    """Mixed into ``Store``."""

    def _persist(self: StoreState) -> None:
        if not self.state_file:
            return
        state = {
            "resourceVersion": self._resource_version,
            "terminating": self._terminating,
            "objects": list(self._objects.values()),
        }
        # Write-then-rename so a crash never leaves a half-written state file.
        partial = self.state_file.with_name(self.state_file.name + ".tmp")
        partial.write_text(json.dumps(state, sort_keys=True))
        os.replace(partial, self.state_file)

    def snapshot(self: StoreState) -> bytes:
        """Every object now, to `restore` later."""
        with self._lock:
            self._reap()
            return marshal.dumps(list(self._objects.values()))

    def restore(self: StoreState, snapshot: bytes) -> None:
        """Back to the objects of `snapshot`. As after an etcd restore, watches from before
        are 410 Gone; the resourceVersion counter keeps counting up."""
        with self._lock:
            self._forget_all()
            self._resource_version += 1  # the restore is a change every watch has missed
            self._restore(self._resource_version, marshal.loads(snapshot))  # noqa: S302
            self.events.restart_at(self._resource_version)
            self._persist()

    def _load(self: StoreState, state_file: Path) -> None:
        state = json.loads(state_file.read_text())
        self._terminating = {k: float(v) for k, v in state.get("terminating", {}).items()}
        self._restore(int(state["resourceVersion"]), state["objects"])

    def _restore(self: StoreState, resource_version: int, objects: list[dict]) -> None:
        """Hold these objects (which are the store's from now on) at this resourceVersion."""
        self._resource_version = resource_version
        # CRDs first: their types must exist before their objects can be read back. The
        # controllers see the others once all are back (an aggregated ClusterRole read back
        # before the roles it aggregates is not one to rewrite).
        crds = [obj for obj in objects if obj["kind"] == "CustomResourceDefinition"]
        others = [obj for obj in objects if obj["kind"] != "CustomResourceDefinition"]
        for batch in (crds, others):
            held = [(rt, obj) for obj in batch if (rt := self._type_of_restored(obj))]
            for rt, obj in held:
                meta = obj["metadata"]
                self._objects[object_key(rt, meta.get("namespace"), meta["name"])] = obj
            for rt, obj in held:
                for controller in self.controllers:
                    controller(self, rt, obj, False)

    def _type_of_restored(self: StoreState, obj: dict) -> ResourceType | None:
        try:
            return self.registry.lookup(obj["kind"], obj["apiVersion"])
        except KeyError:  # a kind this version no longer serves (or its CRD is gone)
            meta = obj.get("metadata") or {}
            sys.stderr.write(
                f"kubesandbox: dropping {obj.get('apiVersion')} "
                f"{obj.get('kind')} {meta.get('namespace', '')}/"
                f"{meta.get('name')} from the state file: not served\n"
            )
            return None

    # A process starts many stores from one seed (a test suite, a stand-in each test): the
    # first writes it, object by object, through validation and admission; the others, and
    # a reset, take a copy of what that left (a new store its watch history too; a reset one
    # keeps counting up from where it was).
    _seeded: ClassVar[dict[Hashable, tuple[int, bytes, list[Event]]]] = {}

    def _seeded_key(self: StoreState) -> Hashable | None:
        if self._seed_key is None:
            return None
        return (self._seed_key, self._seed_namespaces)

    def _remember_seeded(self: StoreState, key: Hashable) -> None:
        # Kept marshalled: loading it back is a copy a few times faster than deepcopy, and
        # the objects are JSON's types only (a seed of anything else is not remembered).
        try:
            objects = marshal.dumps(list(self._objects.values()))
        except ValueError:
            return
        Persistence._seeded[key] = (self._resource_version, objects, self.events.since(0))

    def _restore_seeded(self: StoreState, key: Hashable, *, fresh: bool) -> None:
        resource_version, objects, events = Persistence._seeded[key]
        if not fresh:
            self._resource_version += 1
            self._restore(self._resource_version, marshal.loads(objects))  # noqa: S302
            self.events.restart_at(self._resource_version)
            return
        self._restore(resource_version, marshal.loads(objects))  # noqa: S302 - its own bytes
        for event in events:  # never changed once logged: shared
            self.events.append(event)
