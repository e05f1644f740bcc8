"""The object store: apiserver write semantics over a dict, behind one lock."""

from __future__ import annotations

import base64
import binascii
import copy
import json
import os
import secrets
import threading
import time
import uuid
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

from . import fields, selectors
from .errors import (
    MODIFIED,
    ApiError,
    already_exists,
    bad_request,
    conflict,
    forbidden,
    not_found,
)
from .patching import json_patch, merge_patch
from .resources import NAMESPACES, ResourceType, lookup
from .validation import validate

# Every real cluster has these; code under test may rely on "default" existing.
DEFAULT_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")

MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"
PATCH_TYPES = (JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH, APPLY_PATCH)

# Set by the server on every write; whatever a client sends here is ignored.
_SERVER_METADATA = (
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "managedFields",
    "selfLink",
)

Key = tuple[str, str, str, str]  # (group, plural, namespace, name)


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _key(rt: ResourceType, namespace: str | None, name: str) -> Key:
    return (rt.group, rt.plural, namespace or "", name)


def _without(obj: dict, *top_level: str) -> dict:
    return {k: v for k, v in obj.items() if k not in top_level}


def _comparable(obj: dict) -> dict:
    """The object minus its resourceVersion: equal means the write was a no-op."""
    result = dict(obj)
    result["metadata"] = _without(obj["metadata"], "resourceVersion")
    return result


class Store:
    """Kubernetes objects keyed by type, namespace and name, with apiserver write rules."""

    def __init__(
        self,
        *,
        termination_seconds: float = 0.0,
        state_file: str | os.PathLike[str] | None = None,
        namespaces: Iterable[str] = DEFAULT_NAMESPACES,
    ) -> None:
        self.termination_seconds = termination_seconds
        self.state_file = Path(state_file) if state_file else None
        if self.state_file:
            self.state_file.parent.mkdir(parents=True, exist_ok=True)
        self._seed_namespaces = tuple(namespaces)
        self._lock = threading.RLock()
        self._objects: dict[Key, dict] = {}
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
            obj = self._objects.get(_key(rt, namespace, name))
            if obj is None:
                raise not_found(rt, name)
            return copy.deepcopy(obj)

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
        matches_fields = selectors.field_selector(field_selector)
        after = self._decode_continue(continue_token)
        with self._lock:
            self._reap()
            keys = sorted(
                key
                for key in self._objects
                if key[:2] == (rt.group, rt.plural)
                and (namespace is None or key[2] == namespace)
                and key[2:] > after
            )
            items = [
                copy.deepcopy(self._objects[key])
                for key in keys
                if matches_labels(self._objects[key]) and matches_fields(self._objects[key])
            ]
            metadata: dict = {"resourceVersion": str(self._resource_version)}
        if limit and len(items) > limit:
            last = items[limit - 1]["metadata"]
            token = json.dumps([last.get("namespace", ""), last["name"]])
            metadata["continue"] = base64.urlsafe_b64encode(token.encode()).decode()
            metadata["remainingItemCount"] = len(items) - limit
            items = items[:limit]
        return {
            "kind": f"{rt.kind}List",
            "apiVersion": rt.api_version,
            "metadata": metadata,
            "items": items,
        }

    def objects(self, rt: ResourceType | None = None, namespace: str | None = None) -> list[dict]:
        """Copies of the stored objects, optionally of one type and/or one namespace."""
        with self._lock:
            self._reap()
            return [
                copy.deepcopy(obj)
                for key, obj in sorted(self._objects.items())
                if (rt is None or key[:2] == (rt.group, rt.plural))
                and (namespace is None or key[2] == namespace)
            ]

    # -- writes --------------------------------------------------------------------------

    def create(
        self,
        rt: ResourceType,
        namespace: str | None,
        body: dict,
        *,
        manager: str,
        dry_run: bool = False,
    ) -> dict:
        with self._lock:
            self._reap()
            obj = self._prepare(rt, namespace, body, url_name=None)
            metadata = obj["metadata"]
            if not metadata.get("name") and metadata.get("generateName"):
                metadata["name"] = metadata["generateName"] + secrets.token_hex(3)[:5]
            validate(rt, obj)
            self._check_can_create(rt, namespace, metadata["name"])
            owners: fields.Owners = {}
            fields.record_update(owners, (manager, "Update", ""), None, obj)
            return self._create(rt, obj, owners, dry_run)

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
    ) -> dict:
        with self._lock:
            self._reap()
            existing = self._existing(rt, namespace, name)
            new = self._prepare(rt, namespace, body, url_name=name)
            self._check_precondition(rt, existing, new)
            return self._update(rt, existing, new, (manager, "Update", subresource), dry_run)

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
    ) -> tuple[dict, bool]:
        """Returns the patched object and whether it was created (apply only)."""
        with self._lock:
            self._reap()
            if patch_type == APPLY_PATCH:
                return self._apply(rt, namespace, name, patch, manager, force, subresource, dry_run)
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
            new = self._prepare(rt, namespace, patched, url_name=name)
            self._check_precondition(rt, existing, new)
            owner = (manager or "unknown", "Update", subresource)
            return self._update(rt, existing, new, owner, dry_run), False

    def delete(
        self,
        rt: ResourceType,
        namespace: str | None,
        name: str,
        *,
        preconditions: dict | None = None,
        dry_run: bool = False,
    ) -> dict:
        """Returns what the real server returns: the object, or a Status for built-in types."""
        with self._lock:
            self._reap()
            existing = self._existing(rt, namespace, name)
            for field in ("uid", "resourceVersion"):
                wanted = (preconditions or {}).get(field)
                if wanted and wanted != existing["metadata"].get(field):
                    raise conflict(
                        rt,
                        name,
                        f"Precondition failed: {field} in precondition: {wanted}, "
                        f"{field} in object meta: {existing['metadata'].get(field)}",
                    )
            if dry_run:
                return existing
            if rt is NAMESPACES:
                return self._terminate_namespace(existing)
            del self._objects[_key(rt, namespace, name)]
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
    ) -> dict:
        with self._lock:
            listing = self.list_objects(
                rt, namespace, label_selector=label_selector, field_selector=field_selector
            )
            for item in listing["items"]:
                meta = item["metadata"]
                self.delete(rt, meta.get("namespace"), meta["name"], dry_run=dry_run)
            return listing

    def upsert(self, obj: dict, *, manager: str = "kubesandbox") -> dict:
        """Create or unconditionally replace ``obj``, status included (for seeding tests)."""
        rt = lookup(obj.get("kind", ""), obj.get("apiVersion"))
        body = copy.deepcopy(obj)
        meta = body.setdefault("metadata", {})
        meta.pop("resourceVersion", None)
        namespace = meta.get("namespace") if rt.namespaced else None
        with self._lock:
            if _key(rt, namespace, meta.get("name", "")) not in self._objects:
                stored = self.create(rt, namespace, body, manager=manager)
            else:
                stored = self.replace(rt, namespace, meta["name"], body, manager=manager)
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

        The resourceVersion counter keeps counting: clients may still hold old versions.
        """
        with self._lock:
            self._objects.clear()
            self._terminating.clear()
            for name in self._seed_namespaces:
                self.create(NAMESPACES, None, {"metadata": {"name": name}}, manager="kubesandbox")
            self._persist()

    # -- internals -----------------------------------------------------------------------

    def _existing(self, rt: ResourceType, namespace: str | None, name: str) -> dict:
        obj = self._objects.get(_key(rt, namespace, name))
        if obj is None:
            raise not_found(rt, name)
        return copy.deepcopy(obj)

    def _prepare(
        self, rt: ResourceType, namespace: str | None, body: object, *, url_name: str | None
    ) -> dict:
        """Check a request body against the URL and fill in apiVersion, kind and namespace."""
        if not isinstance(body, dict):
            raise bad_request("the request body must be a JSON or YAML object")
        obj = copy.deepcopy(body)
        for field, expected in (("apiVersion", rt.api_version), ("kind", rt.kind)):
            sent = obj.setdefault(field, expected)
            if sent != expected:
                raise bad_request(
                    f"the {field} in the data ({sent}) does not match the expected {field} "
                    f"({expected})"
                )
        metadata = obj.setdefault("metadata", {})
        if not isinstance(metadata, dict):
            raise bad_request("metadata must be an object")
        if url_name is not None:
            metadata.setdefault("name", url_name)
            if metadata["name"] != url_name:
                raise bad_request(
                    f"the name of the object ({metadata['name']}) does not match the name on "
                    f"the URL ({url_name})"
                )
        if rt.namespaced:
            if metadata.setdefault("namespace", namespace) != namespace:
                raise bad_request(
                    "the namespace of the provided object does not match the namespace sent on "
                    "the request"
                )
        else:
            # The real server silently drops a namespace on cluster-scoped objects.
            metadata.pop("namespace", None)
        return obj

    def _check_can_create(self, rt: ResourceType, namespace: str | None, name: str) -> None:
        if _key(rt, namespace, name) in self._objects:
            raise already_exists(rt, name)
        if not rt.namespaced:
            return
        if _key(NAMESPACES, None, namespace or "") not in self._objects:
            raise not_found(NAMESPACES, namespace or "")
        if namespace in self._terminating:
            raise forbidden(
                rt,
                name,
                f"unable to create new content in namespace {namespace} because it is being "
                "terminated",
            )

    def _check_precondition(self, rt: ResourceType, existing: dict, new: dict) -> None:
        """A resourceVersion in the body must match the stored one (optimistic locking)."""
        sent = new["metadata"].get("resourceVersion")
        if sent and sent != existing["metadata"]["resourceVersion"]:
            raise conflict(rt, existing["metadata"]["name"], MODIFIED)

    def _normalise(self, rt: ResourceType, obj: dict) -> None:
        """Server-side defaulting that code under test is likely to read back."""
        if rt.kind == "Secret":
            string_data = obj.pop("stringData", None) or {}
            data = obj.setdefault("data", {})
            for key, value in string_data.items():
                data[key] = base64.b64encode(str(value).encode()).decode()
            if not data:
                del obj["data"]
            obj.setdefault("type", "Opaque")
        elif rt is NAMESPACES:
            labels = obj["metadata"].setdefault("labels", {})
            labels["kubernetes.io/metadata.name"] = obj["metadata"]["name"]

    def _create(self, rt: ResourceType, obj: dict, owners: fields.Owners, dry_run: bool) -> dict:
        metadata = obj["metadata"]
        for field in _SERVER_METADATA:
            metadata.pop(field, None)
        metadata["uid"] = str(uuid.uuid4())
        metadata["creationTimestamp"] = _now()
        metadata["generation"] = 1
        if rt.has_status:  # status is written through the status subresource only
            obj.pop("status", None)
        if rt is NAMESPACES:
            obj["status"] = {"phase": "Active"}
        self._normalise(rt, obj)
        metadata["managedFields"] = fields.managed_fields(
            owners, obj, [], rt.api_version, metadata["creationTimestamp"]
        )
        if not dry_run:
            self._commit(rt, obj)
        return copy.deepcopy(obj)

    def _update(
        self,
        rt: ResourceType,
        existing: dict,
        new: dict,
        owner: fields.OwnerKey,
        dry_run: bool,
        owners: fields.Owners | None = None,
    ) -> dict:
        """Write ``new`` over ``existing``, keeping what clients may not change."""
        metadata = new["metadata"]
        for field in _SERVER_METADATA:
            metadata.pop(field, None)
            if field in existing["metadata"]:
                metadata[field] = existing["metadata"][field]
        if owner[2] == "status":
            new = {**copy.deepcopy(existing), "status": new.get("status")}
            if new["status"] is None:
                del new["status"]
        elif rt.has_status:
            new = _without(new, "status")
            if "status" in existing:
                new["status"] = existing["status"]
        self._normalise(rt, new)
        validate(rt, new)
        if owners is None:
            owners = fields.owners_of(existing)
            fields.record_update(owners, owner, existing, new)
        new["metadata"]["managedFields"] = fields.managed_fields(
            owners, new, existing["metadata"].get("managedFields") or [], rt.api_version, _now()
        )
        if _comparable(new) == _comparable(existing):
            return existing  # a no-op write keeps the resourceVersion, like the real server
        if _without(new, "metadata", "status") != _without(existing, "metadata", "status"):
            new["metadata"]["generation"] = existing["metadata"].get("generation", 0) + 1
        if not dry_run:
            self._commit(rt, new)
        return copy.deepcopy(new)

    def _apply(
        self,
        rt: ResourceType,
        namespace: str | None,
        name: str,
        config: object,
        manager: str | None,
        force: bool,
        subresource: str,
        dry_run: bool,
    ) -> tuple[dict, bool]:
        """Server-side apply: create, or merge ``config`` and prune fields it no longer sets."""
        if not manager:
            raise ApiError(
                422,
                'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is '
                "required for apply patch",
            )
        config = self._prepare(rt, namespace, config, url_name=name)
        if subresource or rt.has_status:
            # Main endpoint: status is not the caller's; status endpoint: only status is.
            status = config.pop("status", None)
            if subresource and status is not None:
                config["status"] = status
        own: fields.OwnerKey = (manager, "Apply", subresource)
        applied = fields.leaf_paths(config)
        key = _key(rt, namespace, name)
        if key not in self._objects:
            if subresource:
                raise not_found(rt, name)
            obj = merge_patch({}, config)
            validate(rt, obj)
            self._check_can_create(rt, namespace, name)
            return self._create(rt, obj, {own: applied}, dry_run), True
        existing = self._existing(rt, namespace, name)
        self._check_precondition(rt, existing, config)
        owners = fields.owners_of(existing)
        conflicts = fields.apply_conflicts(owners, own, applied, existing, config)
        if conflicts and not force:
            raise ApiError(
                409,
                f"Apply failed with {len(conflicts)} conflict(s): "
                + "; ".join(f'conflict with "{k[0]}": {fields.dotted(p)}' for k, p in conflicts),
                details={
                    "name": name,
                    "kind": rt.plural,
                    "causes": [
                        {
                            "reason": "FieldManagerConflict",
                            "message": f'conflict with "{k[0]}"',
                            "field": fields.dotted(p),
                        }
                        for k, p in conflicts
                    ],
                },
            )
        for owner_key, path in conflicts:  # force: the applier takes these fields over
            owners[owner_key].discard(path)
        merged = merge_patch(existing, config)
        others = set().union(*(paths for k, paths in owners.items() if k != own))
        for path in owners.get(own, set()) - applied - others:
            fields.remove(merged, path)
        owners[own] = applied
        return self._update(rt, existing, merged, own, dry_run, owners), False

    def _terminate_namespace(self, namespace: dict) -> dict:
        name = namespace["metadata"]["name"]
        if name not in self._terminating:
            namespace["metadata"]["deletionTimestamp"] = _now()
            namespace["status"] = {"phase": "Terminating"}
            self._terminating[name] = time.time() + self.termination_seconds
            self._commit(NAMESPACES, namespace)
        response = copy.deepcopy(self._objects[_key(NAMESPACES, None, name)])
        self._reap()
        return response

    def _reap(self) -> None:
        """Finish namespace terminations that are due (lazily, on the next access)."""
        due = [name for name, at in self._terminating.items() if at <= time.time()]
        for name in due:
            del self._terminating[name]
            for key in [k for k in self._objects if k[2] == name]:
                del self._objects[key]
            self._objects.pop(_key(NAMESPACES, None, name), None)
        if due:
            self._resource_version += 1
            self._persist()

    def _commit(self, rt: ResourceType, obj: dict) -> None:
        self._resource_version += 1
        obj["metadata"]["resourceVersion"] = str(self._resource_version)
        self._objects[_key(rt, obj["metadata"].get("namespace"), obj["metadata"]["name"])] = obj
        self._persist()

    @staticmethod
    def _decode_continue(token: str | None) -> tuple[str, str]:
        if not token:
            return ("", "")
        try:
            namespace, name = json.loads(base64.urlsafe_b64decode(token.encode()))
        except (ValueError, TypeError, binascii.Error) as exc:
            raise bad_request(f"invalid continue token: {exc}") from exc
        return (str(namespace), str(name))

    # -- persistence ---------------------------------------------------------------------

    def _persist(self) -> None:
        if not self.state_file:
            return
        state = {
            "resourceVersion": self._resource_version,
            "terminating": self._terminating,
            "objects": list(self._objects.values()),
        }
        # Write-then-rename so a crash never leaves a half-written state file.
        partial = self.state_file.with_name(self.state_file.name + ".tmp")
        partial.write_text(json.dumps(state, indent=1, sort_keys=True))
        os.replace(partial, self.state_file)

    def _load(self, state_file: Path) -> None:
        state = json.loads(state_file.read_text())
        self._resource_version = int(state["resourceVersion"])
        self._terminating = {k: float(v) for k, v in state.get("terminating", {}).items()}
        for obj in state["objects"]:
            rt = lookup(obj["kind"], obj["apiVersion"])
            meta = obj["metadata"]
            self._objects[_key(rt, meta.get("namespace"), meta["name"])] = obj
