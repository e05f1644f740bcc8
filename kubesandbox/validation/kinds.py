"""The hand-written checks of some built-in kinds (Go validation upstream): RBAC ``roleRef``,
immutable selectors."""

from __future__ import annotations

import re

from .. import crds
from ..names import name_problems
from ..resources import NAME_PATH_SEGMENT, RBAC, ResourceType
from .common import Cause


def _go_role_ref(ref: dict) -> str:
    return (
        f'v1.RoleRef{{APIGroup:"{ref.get("apiGroup", "")}", Kind:"{ref.get("kind", "")}", '
        f'Name:"{ref.get("name", "")}"}}'
    )


def _rbac_problems(rt: ResourceType, obj: dict, old: dict | None) -> list[Cause]:
    problems: list[Cause] = []
    if rt.kind in ("RoleBinding", "ClusterRoleBinding"):
        ref = obj.get("roleRef") or {}
        kinds = ("Role", "ClusterRole") if rt.kind == "RoleBinding" else ("ClusterRole",)
        if ref.get("apiGroup") != RBAC:
            problems.append(
                (
                    "FieldValueNotSupported",
                    "roleRef.apiGroup",
                    f'Unsupported value: "{ref.get("apiGroup", "")}": supported values: "{RBAC}"',
                )
            )
        if ref.get("kind") not in kinds:
            supported = ", ".join(f'"{k}"' for k in kinds)
            problems.append(
                (
                    "FieldValueNotSupported",
                    "roleRef.kind",
                    f'Unsupported value: "{ref.get("kind", "")}": supported values: {supported}',
                )
            )
        if not ref.get("name"):
            problems.append(("FieldValueRequired", "roleRef.name", "Required value"))
        else:
            problems += name_problems(NAME_PATH_SEGMENT, ref["name"], "roleRef.name")
        for index, subject in enumerate(obj.get("subjects") or []):
            where = f"subjects[{index}]"
            kind = subject.get("kind", "")
            if kind not in ("ServiceAccount", "User", "Group"):
                problems.append(
                    (
                        "FieldValueNotSupported",
                        f"{where}.kind",
                        f'Unsupported value: "{kind}": supported values: '
                        '"ServiceAccount", "User", "Group"',
                    )
                )
            if (
                kind == "ServiceAccount"
                and rt.kind == "ClusterRoleBinding"
                and not subject.get("namespace")
            ):
                problems.append(("FieldValueRequired", f"{where}.namespace", "Required value"))
        if old is not None and (old.get("roleRef") or {}) != ref:
            problems.append(
                (
                    "FieldValueInvalid",
                    "roleRef",
                    f"Invalid value: {_go_role_ref(ref)}: cannot change roleRef",
                )
            )
    elif rt.kind in ("Role", "ClusterRole"):
        for index, rule in enumerate(obj.get("rules") or []):
            where = f"rules[{index}]"
            if not rule.get("verbs"):
                problems.append(
                    (
                        "FieldValueRequired",
                        f"{where}.verbs",
                        "Required value: verbs must contain at least one value",
                    )
                )
            if rule.get("nonResourceURLs"):
                if rt.kind == "Role":
                    problems.append(
                        (
                            "FieldValueInvalid",
                            f"{where}.nonResourceURLs",
                            "Invalid value: ...: namespaced rules cannot apply to "
                            "non-resource URLs",
                        )
                    )
                if rule.get("resources") or rule.get("apiGroups"):
                    problems.append(
                        (
                            "FieldValueInvalid",
                            f"{where}.nonResourceURLs",
                            "Invalid value: ...: rules cannot apply to both regular "
                            "resources and non-resource URLs",
                        )
                    )
            elif not rule.get("apiGroups"):
                problems.append(
                    (
                        "FieldValueRequired",
                        f"{where}.apiGroups",
                        "Required value: resource rules must supply at least one api group",
                    )
                )
            elif not rule.get("resources"):
                problems.append(
                    (
                        "FieldValueRequired",
                        f"{where}.resources",
                        "Required value: resource rules must supply at least one resource",
                    )
                )
    return problems


_SELECTOR_IMMUTABLE = {
    ("apps", "Deployment"),
    ("apps", "StatefulSet"),
    ("apps", "DaemonSet"),
    ("apps", "ReplicaSet"),
}


def kind_problems(rt: ResourceType, obj: dict, old: dict | None) -> list[Cause]:
    problems: list[Cause] = []
    if rt.group == RBAC:
        problems += _rbac_problems(rt, obj, old)
    if crds.is_crd(rt):
        problems += crds.crd_problems(obj)
    if rt.kind == "ResourceQuota":
        for key in (obj.get("spec") or {}).get("hard") or {}:
            if not re.fullmatch(r"([a-z0-9.-]+/)?[a-z0-9A-Z.-]+", str(key)):
                problems.append(
                    (
                        "FieldValueInvalid",
                        f"spec.hard[{key}]",
                        f'Invalid value: "{key}": must be a standard resource type or '
                        "fully qualified",
                    )
                )
    if old is None:
        return problems
    if (rt.group, rt.kind) in _SELECTOR_IMMUTABLE and (
        (obj.get("spec") or {}).get("selector") != (old.get("spec") or {}).get("selector")
    ):
        problems.append(
            ("FieldValueInvalid", "spec.selector", "Invalid value: ...: field is immutable")
        )
    if rt.group == "" and rt.kind in ("ConfigMap", "Secret") and old.get("immutable"):
        for field in ("data", "binaryData", "stringData"):
            if obj.get(field) != old.get(field):
                problems.append(
                    (
                        "FieldForbidden",
                        field,
                        "Forbidden: field is immutable when `immutable` is set",
                    )
                )
    if rt.kind == "Secret" and rt.group == "" and obj.get("type") != old.get("type"):
        problems.append(
            ("FieldValueInvalid", "type", f'Invalid value: "{obj.get("type")}": field is immutable')
        )
    return problems
