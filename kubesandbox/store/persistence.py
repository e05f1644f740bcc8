"""The state file (a developer sandbox's objects survive restarts) and snapshots (a test
suite's world built once, restored for each test)."""

from __future__ import annotations

import json
import marshal
import os
import sys
from collections.abc import Hashable, Iterable
from pathlib import Path
from typing import ClassVar

from ..objects import object_key
from ..resources import ResourceType
from ..watch import Event
from .state import StoreState

CRDS = ("apiextensions.k8s.io", "customresourcedefinitions")


def _versions(crds: Iterable[dict]) -> list[tuple]:
    return sorted(
        (m["name"], m.get("uid"), m.get("resourceVersion")) for m in (o["metadata"] for o in crds)
    )


def _pack(objects: list[dict]) -> bytes:
    """Objects kept marshalled (loading them back is a copy a few times faster than deepcopy),
    the CRDs apart and named by their versions: a restore onto the same CRDs (a test changed
    none) keeps them and their types as they are, instead of loading back the largest
    objects a cluster has. Raises ValueError for anything but JSON's types."""
    crds = [obj for obj in objects if obj["kind"] == "CustomResourceDefinition"]
    others = [obj for obj in objects if obj["kind"] != "CustomResourceDefinition"]
    return marshal.dumps((_versions(crds), marshal.dumps(crds), marshal.dumps(others)))


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
            return _pack(list(self._objects.values()))

    def restore(self: StoreState, snapshot: bytes) -> None:
        """Back to the objects of `snapshot`. As after an etcd restore, watches from before
        are 410 Gone; the resourceVersion counter keeps counting up."""
        with self._lock:
            self._resource_version += 1  # the restore is a change every watch has missed
            self._unpack(self._resource_version, snapshot)
            self.events.restart_at(self._resource_version)
            self._persist()

    def _unpack(self: StoreState, resource_version: int, packed: bytes) -> None:
        """Every object forgotten, those `packed` held at this resourceVersion; the CRDs
        held now kept when they are the ones packed."""
        versions, crds, others = marshal.loads(packed)  # noqa: S302 - the store's own bytes
        keep = versions == _versions(self._objects.of_type(*CRDS).values())
        self._forget_all(keep_crds=keep)
        objects = marshal.loads(others)  # noqa: S302
        self._restore(resource_version, objects if keep else marshal.loads(crds) + objects)  # noqa: S302

    def _forget_all(self: StoreState, *, keep_crds: bool = False) -> None:
        """Every object gone at once (but the CRDs, when kept), the gone CRDs' types
        unserved: no event, no copy (a reset or restore starts the watch history again)."""
        if keep_crds:
            for key in [key for key in self._objects if key[:2] != CRDS]:
                self._objects.pop(key)
        else:
            for obj in self._objects.of_type(*CRDS).values():
                self.registry.set_custom(obj["metadata"]["name"], [])
            self._objects.clear()
        self._terminating.clear()

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
        try:  # JSON's types only: a seed of anything else is not remembered
            packed = _pack(list(self._objects.values()))
        except ValueError:
            return
        Persistence._seeded[key] = (self._resource_version, packed, self.events.since(0))

    def _restore_seeded(self: StoreState, key: Hashable, *, fresh: bool) -> None:
        resource_version, packed, events = Persistence._seeded[key]
        if not fresh:
            self._resource_version += 1
            self._unpack(self._resource_version, packed)
            self.events.restart_at(self._resource_version)
            return
        self._unpack(resource_version, packed)
        for event in events:  # never changed once logged: shared
            self.events.append(event)
