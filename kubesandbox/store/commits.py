"""The steps every write ends in, run with the store's lock held: checks against what is
stored, server metadata, admission, the commit itself (resourceVersion, watch event,
controllers, state file), and the same commit for the sandbox's own controllers."""

from __future__ import annotations

import copy
import threading
import uuid

from .. import fields
from ..errors import MODIFIED, already_exists, conflict, forbidden, not_found
from ..objects import (
    SERVER_METADATA,
    Key,
    WriteContext,
    comparable,
    normalise,
    now,
    object_key,
    prepare,
    without,
)
from ..resources import NAMESPACES, ResourceType
from ..validation import decode, validate
from ..watch import Event
from .state import StoreState


class Commits:
    """Mixed into ``Store``."""

    def _existing(self: StoreState, rt: ResourceType, namespace: str | None, name: str) -> dict:
        obj = self._objects.get(object_key(rt, namespace, name))
        if obj is None:
            raise not_found(rt, name)
        return copy.deepcopy(obj)

    def _check_can_create(
        self: StoreState, rt: ResourceType, namespace: str | None, name: str
    ) -> None:
        if object_key(rt, namespace, name) in self._objects:
            raise already_exists(rt, name)
        if not rt.namespaced:
            return
        if object_key(NAMESPACES, None, namespace or "") not in self._objects:
            raise not_found(NAMESPACES, namespace or "")
        if namespace in self._terminating:
            raise forbidden(
                rt,
                name,
                f"unable to create new content in namespace {namespace} because it is being "
                "terminated",
            )

    def _check_precondition(self: StoreState, rt: ResourceType, existing: dict, new: dict) -> None:
        """A resourceVersion in the body must match the stored one (optimistic locking)."""
        sent = new["metadata"].get("resourceVersion")
        if sent and sent != existing["metadata"]["resourceVersion"]:
            raise conflict(rt, existing["metadata"]["name"], MODIFIED)

    def _create(
        self: StoreState,
        rt: ResourceType,
        obj: dict,
        owners: fields.Owners,
        dry_run: bool,
        ctx: WriteContext | None = None,
    ) -> dict:
        metadata = obj["metadata"]
        for field in SERVER_METADATA:
            metadata.pop(field, None)
        metadata["uid"] = str(uuid.uuid4())
        metadata["creationTimestamp"] = now()
        metadata["generation"] = 1
        if rt.has_status:  # status is written through the status subresource only
            obj.pop("status", None)
        if rt is NAMESPACES:
            obj["status"] = {"phase": "Active"}
        normalise(rt, obj)
        metadata["managedFields"] = fields.managed_fields(
            owners, obj, [], rt.api_version, metadata["creationTimestamp"]
        )
        if self.admission is not None:
            self.admission("CREATE", rt, obj, None, ctx or WriteContext())
        if not dry_run:
            self._commit(rt, obj)
        return copy.deepcopy(obj)

    def _write_over(
        self: StoreState,
        rt: ResourceType,
        namespace: str | None,
        name: str,
        existing: dict,
        body: dict,
        owner: fields.OwnerKey,
        dry_run: bool,
        ctx: WriteContext,
    ) -> dict:
        """``body`` in place of ``existing`` (a replace, or a patch's result): defaulted,
        decoded (its warnings kept), its preconditions checked, then written."""
        new = prepare(rt, namespace, body, url_name=name)
        ctx.warnings += decode(rt, new, ctx.field_validation)
        self._check_precondition(rt, existing, new)
        return self._update(rt, existing, new, owner, dry_run, ctx=ctx)

    def _update(
        self: StoreState,
        rt: ResourceType,
        existing: dict,
        new: dict,
        owner: fields.OwnerKey,
        dry_run: bool,
        owners: fields.Owners | None = None,
        ctx: WriteContext | None = None,
    ) -> dict:
        """Write ``new`` over ``existing``, keeping what clients may not change."""
        metadata = new["metadata"]
        for field in SERVER_METADATA:
            metadata.pop(field, None)
            if field in existing["metadata"]:
                metadata[field] = existing["metadata"][field]
        if owner[2] == "status":
            new = {**copy.deepcopy(existing), "status": new.get("status")}
            if new["status"] is None:
                del new["status"]
        elif rt.has_status:
            new = without(new, "status")
            if "status" in existing:
                new["status"] = existing["status"]
        normalise(rt, new)
        validate(rt, new, existing)
        if owners is None:
            owners = fields.owners_of(existing)
            fields.record_update(owners, owner, existing, new)
        new["metadata"]["managedFields"] = fields.managed_fields(
            owners, new, existing["metadata"].get("managedFields") or [], rt.api_version, now()
        )
        # Admission sees every update, a no-op too (kube-apiserver validates before storage
        # notices nothing changed).
        if self.admission is not None:
            self.admission("UPDATE", rt, new, existing, ctx or WriteContext())
        if comparable(new) == comparable(existing):
            return existing  # a no-op write keeps the resourceVersion, like the real server
        if without(new, "metadata", "status") != without(existing, "metadata", "status"):
            new["metadata"]["generation"] = existing["metadata"].get("generation", 0) + 1
        if not dry_run:
            self._commit(rt, new, existing)
        return copy.deepcopy(new)

    def _commit(self: StoreState, rt: ResourceType, obj: dict, old: dict | None = None) -> None:
        self._resource_version += 1
        obj["metadata"]["resourceVersion"] = str(self._resource_version)
        key = object_key(rt, obj["metadata"].get("namespace"), obj["metadata"]["name"])
        self._objects[key] = obj
        event_type = "ADDED" if old is None else "MODIFIED"
        self.events.append(
            Event(
                self._resource_version,
                event_type,
                key,
                copy.deepcopy(obj),
                copy.deepcopy(old) if old else None,
            )
        )
        for controller in self.controllers:
            controller(self, rt, obj, False)
        self._persist()

    def _remove(self: StoreState, rt: ResourceType | None, key: Key) -> None:
        """Delete one stored object, telling watchers and controllers."""
        obj = self._objects.pop(key, None)
        if obj is None:
            return
        self._resource_version += 1
        gone = copy.deepcopy(obj)
        gone["metadata"]["resourceVersion"] = str(self._resource_version)
        self.events.append(Event(self._resource_version, "DELETED", key, gone))
        if rt is None:
            rt = next((t for t in self.registry.all() if (t.group, t.plural) == key[:2]), None)
        if rt is not None:
            for controller in self.controllers:
                controller(self, rt, gone, True)

    # -- for the sandbox's controllers ----------------------------------------------------

    def write_internal(self: StoreState, rt: ResourceType, obj: dict) -> None:
        """Store ``obj`` as a controller would: no validation, no admission."""
        meta = obj["metadata"]
        key = object_key(rt, meta.get("namespace"), meta["name"])
        old = self._objects.get(key)
        if old is None:
            meta.setdefault("uid", str(uuid.uuid4()))
            meta.setdefault("creationTimestamp", now())
            meta.setdefault("generation", 1)
        self._commit(rt, obj, old)

    def remove_all(self: StoreState, group: str, plural: str) -> None:
        for key in list(self._objects.of_type(group, plural)):
            self._remove(None, key)

    def stored(
        self: StoreState, group: str, plural: str, namespace: str | None = None
    ) -> list[dict]:
        """The live objects of one type, in one namespace or all (no copies: callers inside
        the lock only read)."""
        return list(self._objects.of_type(group, plural, namespace).values())

    def stored_object(
        self: StoreState, group: str, plural: str, namespace: str, name: str
    ) -> dict | None:
        """One live object by its key, or None (no copy: callers inside the lock only read)."""
        return self._objects.get((group, plural, namespace, name))

    @property
    def lock(self: StoreState) -> threading.RLock:
        return self._lock
