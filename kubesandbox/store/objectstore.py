"""The object store: apiserver write semantics over a dict, behind one lock.

Every write goes: decode (unknown fields per ``fieldValidation``, CR defaults), server
metadata, validation, the admission hook (RBAC escalation checks, ValidatingAdmissionPolicy),
commit, then the built-in "controllers" the sandbox has (CRD registration, ClusterRole
aggregation) and the watch log.
"""

from __future__ import annotations

import copy
import itertools
import os
import secrets
import threading
from collections.abc import Callable, Hashable, Iterable
from pathlib import Path

from .. import fields, selectors
from ..errors import ApiError, bad_request, conflict, continue_expired, forbidden, not_found
from ..objects import (
    APPLY_PATCH,
    DEFAULT_NAMESPACES,
    JSON_PATCH,
    MERGE_PATCH,
    PROTECTED_NAMESPACES,
    STRATEGIC_MERGE_PATCH,
    AdmissionHook,
    WriteContext,
    as_version,
    decode_continue,
    immutable,
    list_page,
    object_key,
    prepare,
)
from ..patching import json_patch, merge_patch
from ..resources import NAMESPACES, Registry, ResourceType
from ..storeview import Controller
from ..validation import decode, validate
from ..watch import EventLog
from .apply import ServerSideApply
from .commits import Commits
from .index import ObjectIndex
from .namespaces import NamespaceLifecycle
from .persistence import Persistence


class Store(Commits, ServerSideApply, NamespaceLifecycle, Persistence):
    """Kubernetes objects keyed by type, namespace and name, with apiserver write rules."""

    def __init__(
        self,
        *,
        termination_seconds: float = 0.0,
        state_file: str | os.PathLike[str] | None = None,
        namespaces: Iterable[str] = DEFAULT_NAMESPACES,
        registry: Registry | None = None,
        seed: Callable[[Store], None] | None = None,
        seed_key: Hashable | None = None,
        controllers: Iterable[Controller] = (),
    ) -> None:
        self.registry = registry or Registry()
        self.events = EventLog()
        self.admission: AdmissionHook | None = None
        self.controllers: list[Controller] = list(controllers)
        self._seed = seed
        # What `seed` writes, when it writes the same for the same key: a new store starts
        # from the state the first one seeded (see reset).
        self._seed_key = seed_key
        self.termination_seconds = termination_seconds
        self.state_file = Path(state_file) if state_file else None
        if self.state_file:
            self.state_file.parent.mkdir(parents=True, exist_ok=True)
        self._seed_namespaces = tuple(namespaces)
        self._lock = threading.RLock()
        self._objects = ObjectIndex()
        self._resource_version = 0
        # Terminating namespace -> epoch second at which it and its content disappear.
        self._terminating: dict[str, float] = {}
        if self.state_file and self.state_file.exists():
            self._load(self.state_file)
        else:
            self.reset()

    # -- reads ---------------------------------------------------------------------------

    def get(self, rt: ResourceType, namespace: str | None, name: str) -> dict:
        with self._lock:
            self._reap()
            obj = self._objects.get(object_key(rt, namespace, name))
            if obj is None:
                raise not_found(rt, name)
            return as_version(rt, obj)

    @property
    def resource_version(self) -> int:
        return self._resource_version

    def list_objects(
        self,
        rt: ResourceType,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
    ) -> dict:
        """A ``<Kind>List``; ``namespace=None`` lists across all namespaces."""
        matches_labels = selectors.label_selector(label_selector)
        matches_fields = selectors.field_selector(field_selector, rt.kind)
        after, listed_at = decode_continue(continue_token)
        with self._lock:
            self._reap()
            if listed_at is not None and listed_at < self.events.first_kept:
                raise continue_expired()
            keys = sorted(
                key
                for key in self._objects.of_type(rt.group, rt.plural, namespace)
                if key[2:] > after
            )
            matching = (
                key
                for key in keys
                if matches_labels(self._objects[key]) and matches_fields(self._objects[key])
            )
            # Only the page is copied out; what is left after it is only counted.
            chosen = list(itertools.islice(matching, limit)) if limit else list(matching)
            items = [as_version(rt, self._objects[key]) for key in chosen]
            remaining = sum(1 for _ in matching) if limit else 0
            # Every page carries the first page's version, as a real API server's do (it
            # serves them from that snapshot; this one serves later pages from now).
            version = self._resource_version if listed_at is None else listed_at
        return list_page(rt, items, version, remaining)

    def objects(self, rt: ResourceType | None = None, namespace: str | None = None) -> list[dict]:
        """Copies of the stored objects, optionally of one type and/or one namespace."""
        with self._lock:
            self._reap()
            if rt is None:
                chosen = {
                    key: obj
                    for key, obj in self._objects.items()
                    if namespace is None or key[2] == namespace
                }
            else:
                chosen = self._objects.of_type(rt.group, rt.plural, namespace)
            return [copy.deepcopy(obj) for _, obj in sorted(chosen.items())]

    # -- writes --------------------------------------------------------------------------

    def create(
        self,
        rt: ResourceType,
        namespace: str | None,
        body: dict,
        *,
        manager: str,
        dry_run: bool = False,
        ctx: WriteContext | None = None,
    ) -> dict:
        ctx = ctx or WriteContext()
        with self._lock:
            self._reap()
            obj = prepare(rt, namespace, body, url_name=None)
            ctx.warnings += decode(rt, obj, ctx.field_validation)
            metadata = obj["metadata"]
            if not metadata.get("name") and metadata.get("generateName"):
                metadata["name"] = metadata["generateName"] + secrets.token_hex(3)[:5]
            validate(rt, obj)
            self._check_can_create(rt, namespace, metadata["name"])
            owners: fields.Owners = {}
            fields.record_update(owners, (manager, "Update", ""), None, obj)
            return self._create(rt, obj, owners, dry_run, ctx)

    def replace(
        self,
        rt: ResourceType,
        namespace: str | None,
        name: str,
        body: dict,
        *,
        manager: str,
        subresource: str = "",
        dry_run: bool = False,
        ctx: WriteContext | None = None,
    ) -> dict:
        ctx = ctx or WriteContext()
        with self._lock:
            self._reap()
            existing = self._existing(rt, namespace, name)
            owner = (manager, "Update", subresource)
            return self._write_over(rt, namespace, name, existing, body, owner, dry_run, ctx)

    def patch(
        self,
        rt: ResourceType,
        namespace: str | None,
        name: str,
        patch_type: str,
        patch: object,
        *,
        manager: str | None,
        force: bool = False,
        subresource: str = "",
        dry_run: bool = False,
        ctx: WriteContext | None = None,
    ) -> tuple[dict, bool]:
        """Returns the patched object and whether it was created (apply only)."""
        ctx = ctx or WriteContext()
        with self._lock:
            self._reap()
            if patch_type == APPLY_PATCH:
                return self._apply(
                    rt, namespace, name, patch, manager, force, subresource, dry_run, ctx
                )
            existing = self._existing(rt, namespace, name)
            if patch_type == STRATEGIC_MERGE_PATCH and rt.custom:
                raise ApiError(
                    415,
                    "the body of the request was in an unknown format - accepted media types "
                    f"include: {JSON_PATCH}, {MERGE_PATCH}, {APPLY_PATCH}",
                )
            if patch_type == JSON_PATCH:
                patched = json_patch(existing, patch)
            elif isinstance(patch, dict):
                # Strategic merge is treated as a plain merge patch (lists are replaced).
                patched = merge_patch(existing, patch)
            else:
                raise bad_request("a merge patch must be a JSON object")
            if not isinstance(patched, dict) or not isinstance(patched.get("metadata"), dict):
                raise bad_request("the patched object is not a Kubernetes object")
            owner = (manager or "unknown", "Update", subresource)
            return (
                self._write_over(rt, namespace, name, existing, patched, owner, dry_run, ctx),
                False,
            )

    def delete(
        self,
        rt: ResourceType,
        namespace: str | None,
        name: str,
        *,
        preconditions: dict | None = None,
        dry_run: bool = False,
        ctx: WriteContext | None = None,
    ) -> dict:
        """Returns what the real server returns: the object, or a Status for built-in types."""
        ctx = ctx or WriteContext()
        with self._lock:
            self._reap()
            existing = self._existing(rt, namespace, name)
            if rt is NAMESPACES and name in PROTECTED_NAMESPACES:
                raise forbidden(rt, name, "this namespace may not be deleted")
            for field in ("uid", "resourceVersion"):
                wanted = (preconditions or {}).get(field)
                if wanted and wanted != existing["metadata"].get(field):
                    raise conflict(
                        rt,
                        name,
                        f"Precondition failed: {field} in precondition: {wanted}, "
                        f"{field} in object meta: {existing['metadata'].get(field)}",
                    )
            if self.admission is not None:
                self.admission("DELETE", rt, None, existing, ctx)
            if dry_run:
                return existing
            if rt is NAMESPACES:
                return self._terminate_namespace(existing)
            self._remove(rt, object_key(rt, namespace, name))
            self._persist()
            if rt.custom:
                return existing
            details = {"name": name, "kind": rt.plural, "uid": existing["metadata"]["uid"]}
            if rt.group:
                details["group"] = rt.group
            return {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Success",
                "details": details,
            }

    def delete_collection(
        self,
        rt: ResourceType,
        namespace: str | None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        dry_run: bool = False,
        ctx: WriteContext | None = None,
    ) -> dict:
        with self._lock:
            listing = self.list_objects(
                rt, namespace, label_selector=label_selector, field_selector=field_selector
            )
            for item in listing["items"]:
                meta = item["metadata"]
                self.delete(rt, meta.get("namespace"), meta["name"], dry_run=dry_run, ctx=ctx)
            return listing

    def upsert(self, obj: dict, *, manager: str = "kubesandbox") -> dict:
        """Create or unconditionally replace ``obj``, status included (for seeding tests).

        A change to an immutable field (a binding's roleRef) deletes and re-creates the object,
        as an operator would have to."""
        rt = self.registry.lookup(obj.get("kind", ""), obj.get("apiVersion"))
        # create() and replace() copy the body whole; only the metadata changes here.
        meta = {**(obj.get("metadata") or {})}
        meta.pop("resourceVersion", None)
        body = {**obj, "metadata": meta}
        namespace = meta.get("namespace") if rt.namespaced else None
        with self._lock:
            if object_key(rt, namespace, meta.get("name", "")) not in self._objects:
                stored = self.create(rt, namespace, body, manager=manager)
            else:
                try:
                    stored = self.replace(rt, namespace, meta["name"], body, manager=manager)
                except ApiError as error:
                    if not immutable(error):
                        raise
                    # What an operator does to change an immutable field: delete, re-create.
                    self._remove(rt, object_key(rt, namespace, meta["name"]))
                    stored = self.create(rt, namespace, body, manager=manager)
            if rt.has_status and "status" in body:
                # Stand in for the controller that would have written the status.
                stored = self.replace(
                    rt,
                    namespace,
                    stored["metadata"]["name"],
                    body,
                    manager=manager,
                    subresource="status",
                )
            return stored

    def reset(self) -> None:
        """Forget every object, then re-create the seed namespaces.

        The resourceVersion counter keeps counting: clients may still hold old versions (a
        watch from before a reset is 410 Gone, as after an etcd restore).
        """
        with self._lock:
            fresh = self._resource_version == 0
            key = self._seeded_key()
            if key in self._seeded:
                self._restore_seeded(key, fresh=fresh)
            else:
                self._forget_all()
                if not fresh:
                    self._resource_version += 1
                    self.events.restart_at(self._resource_version)
                for name in self._seed_namespaces:
                    self.create(
                        NAMESPACES, None, {"metadata": {"name": name}}, manager="kubesandbox"
                    )
                if self._seed is not None:
                    self._seed(self)
                if key is not None and fresh:
                    self._remember_seeded(key)
            self._persist()
