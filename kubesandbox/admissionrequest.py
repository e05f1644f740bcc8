"""An admission request as a ValidatingAdmissionPolicy sees it (``request``,
``namespaceObject``), and whether a policy's ``matchConstraints`` or a binding's
``matchResources`` select it."""

from __future__ import annotations

import uuid
from typing import Any

from .resources import NAMESPACES, ResourceType
from .selectors import matches_label_selector


def _rule_matches(rule: dict, operation: str, rt: ResourceType, subresource: str) -> bool:
    if not {"*", operation} & set(rule.get("operations") or []):
        return False
    if not {"*", rt.group} & set(rule.get("apiGroups") or []):
        return False
    if not {"*", rt.version} & set(rule.get("apiVersions") or []):
        return False
    resource = f"{rt.plural}/{subresource}" if subresource else rt.plural
    wanted = set(rule.get("resources") or [])
    if resource in wanted or "*/*" in wanted:
        return True
    if not subresource and "*" in wanted:
        return True
    return bool(subresource) and (f"*/{subresource}" in wanted or f"{rt.plural}/*" in wanted)


def _scope_ok(rule: dict, rt: ResourceType) -> bool:
    scope = rule.get("scope") or "*"
    return scope == "*" or (scope == "Namespaced") == rt.namespaced


def matches(match: dict | None, req: AdmissionRequest) -> bool:
    if not match:
        return True
    rules = match.get("resourceRules")
    if rules is not None and not any(
        _rule_matches(r, req.operation, req.rt, req.subresource) and _scope_ok(r, req.rt)
        for r in rules
    ):
        return False
    if any(
        _rule_matches(r, req.operation, req.rt, req.subresource)
        for r in match.get("excludeResourceRules") or []
    ):
        return False
    objects = [o for o in (req.obj, req.old) if o is not None]
    selector = match.get("namespaceSelector")
    if selector:
        if req.rt is NAMESPACES:
            if not any(
                matches_label_selector(selector, o["metadata"].get("labels")) for o in objects
            ):
                return False
        elif req.rt.namespaced:
            labels = ((req.namespace_object or {}).get("metadata") or {}).get("labels")
            if not matches_label_selector(selector, labels):
                return False
    selector = match.get("objectSelector")
    return not selector or any(
        matches_label_selector(selector, o["metadata"].get("labels")) for o in objects
    )


# What of a Namespace's metadata kube-apiserver hands a policy as `namespaceObject` (its
# CreateNamespaceObject): no managedFields, ownerReferences or the like.
_NAMESPACE_METADATA = (
    "name",
    "generateName",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "finalizers",
)


def namespace_object_of(namespace: dict | None) -> dict | None:
    """`namespaceObject`: null for a cluster-scoped kind (a Namespace included), else the
    object's namespace with its spec, status and the metadata above."""
    if namespace is None:
        return None
    meta = namespace.get("metadata") or {}
    pruned: dict = {"metadata": {key: meta[key] for key in _NAMESPACE_METADATA if key in meta}}
    for key in ("spec", "status"):
        if key in namespace:
            pruned[key] = namespace[key]
    return pruned


class AdmissionRequest:
    def __init__(
        self,
        operation: str,
        rt: ResourceType,
        subresource: str,
        obj: dict | None,
        old: dict | None,
        user: Any,
        namespace_object: dict | None,
        dry_run: bool,
    ) -> None:
        self.operation, self.rt, self.subresource = operation, rt, subresource
        self.obj, self.old, self.user = obj, old, user
        self.namespace_object = namespace_object
        source = obj if obj is not None else old or {}
        meta = source.get("metadata") or {}
        gvk = {"group": rt.group, "version": rt.version, "kind": rt.kind}
        gvr = {"group": rt.group, "version": rt.version, "resource": rt.plural}
        self.namespace = meta.get("namespace", "") if rt.namespaced else ""
        self.request = {
            "uid": str(uuid.uuid4()),
            "kind": gvk,
            "resource": gvr,
            "subResource": subresource,
            "requestKind": gvk,
            "requestResource": gvr,
            "requestSubResource": subresource,
            "name": meta.get("name", ""),
            "namespace": self.namespace,
            "operation": operation,
            "userInfo": user.as_dict(),
            "dryRun": dry_run,
        }
