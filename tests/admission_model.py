"""An offline model of ValidatingAdmissionPolicy evaluation (cel-python over an admission
request), for tests that reason about Berth's policies without an API server.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import celpy
from celpy import CELEvalError

from tests.rbac_model import label_selector_matches, resource_of


@dataclass(frozen=True)
class AdmissionResult:
    allowed: bool
    reasons: tuple[str, ...] = ()


def admission_request(
    operation: str,
    *,
    user: str,
    groups: Iterable[str] = (),
    obj: Mapping[str, Any] | None = None,
    old: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """An admission.k8s.io/v1 AdmissionRequest as the API server builds it (the `request`
    CEL variable), with `object` and `oldObject` alongside: CREATE has only obj, DELETE
    only old, UPDATE both."""
    source = obj if obj is not None else old
    if source is None:
        raise ValueError("an admission request needs an object or an old object")
    group, resource = resource_of(source["apiVersion"], source["kind"])
    version = source["apiVersion"].rpartition("/")[2]
    meta = source["metadata"]
    gvk = {"group": group, "version": version, "kind": source["kind"]}
    gvr = {"group": group, "version": version, "resource": resource}
    return {
        "uid": "00000000-0000-0000-0000-000000000000",
        "kind": gvk,
        "resource": gvr,
        "requestKind": gvk,
        "requestResource": gvr,
        "name": meta.get("name", ""),
        "namespace": meta.get("namespace", ""),
        "operation": operation,
        "userInfo": {"username": user, "groups": list(groups)},
        "object": obj,
        "oldObject": old,
        "dryRun": False,
    }


_CEL = celpy.Environment()


@functools.lru_cache(maxsize=256)
def _program(expression: str):  # noqa: ANN202 - a celpy Runner
    return _CEL.program(_CEL.compile(expression))


def evaluate_cel(expression: str, activation: Mapping[str, Any]) -> Any:
    """Evaluate one expression with cel-python; a CELEvalError is returned, not raised."""
    try:
        return _program(expression).evaluate(activation)
    except CELEvalError as error:
        return error


def _holds(result: Any) -> bool:
    return isinstance(result, celpy.celtypes.BoolType) and bool(result)


def _rules_match(rules: Iterable[Mapping[str, Any]], request: Mapping[str, Any]) -> bool:
    resource = request["resource"]["resource"]
    group, version = request["resource"]["group"], request["resource"]["version"]
    for rule in rules:
        if not {"*", request["operation"]} & set(rule.get("operations") or []):
            continue
        if not {"*", group} & set(rule.get("apiGroups") or []):
            continue
        if not {"*", version} & set(rule.get("apiVersions") or []):
            continue
        # "*" is every resource but no subresource; the requests here carry none.
        if {"*", resource} & set(rule.get("resources") or []):
            return True
    return False


def _resources_match(
    match: Mapping[str, Any] | None,
    request: Mapping[str, Any],
    namespaces: Mapping[str, Mapping[str, str]],
) -> bool:
    """matchConstraints / matchResources: rules, namespaceSelector, objectSelector."""
    if not match:
        return True
    if "resourceRules" in match and not _rules_match(match["resourceRules"], request):
        return False
    if _rules_match(match.get("excludeResourceRules") or [], request):
        return False
    objects = [o for o in (request["object"], request["oldObject"]) if o is not None]
    if "namespaceSelector" in match:
        if request["resource"]["resource"] == "namespaces":
            # A Namespace is matched by its own labels.
            if not any(
                label_selector_matches(
                    match["namespaceSelector"], o["metadata"].get("labels") or {}
                )
                for o in objects
            ):
                return False
        elif request["namespace"]:
            labels = namespaces.get(request["namespace"], {})
            if not label_selector_matches(match["namespaceSelector"], labels):
                return False
        # Other cluster-scoped objects are never skipped by a namespaceSelector.
    return "objectSelector" not in match or any(
        label_selector_matches(match["objectSelector"], o["metadata"].get("labels") or {})
        for o in objects
    )


def allowed_by_admission(
    request: Mapping[str, Any],
    objects: Iterable[Mapping[str, Any]],
    *,
    namespaces: Mapping[str, Mapping[str, str]] | None = None,
) -> AdmissionResult:
    """Would the ValidatingAdmissionPolicies among `objects` (with their bindings and the
    ConfigMaps their paramRefs name) admit `request`? `namespaces` gives each namespace's
    labels, for namespaceSelectors. Follows the API server: a binding applies when both
    the policy's matchConstraints and its own matchResources match; matchConditions must
    all hold; a missing param with parameterNotFoundAction Deny refuses; a validation that
    is false or fails to evaluate (failurePolicy Fail) refuses when the binding's
    validationActions include Deny."""
    objects = list(objects)
    namespaces = namespaces or {}
    policies = {
        o["metadata"]["name"]: o for o in objects if o["kind"] == "ValidatingAdmissionPolicy"
    }
    params = {
        (o["metadata"].get("namespace", ""), o["metadata"]["name"]): o
        for o in objects
        if o["kind"] == "ConfigMap"
    }
    namespace_object = (
        {"metadata": {"name": request["namespace"], "labels": namespaces[request["namespace"]]}}
        if request["namespace"] in namespaces
        else None
    )
    reasons: list[str] = []
    for binding in (o for o in objects if o["kind"] == "ValidatingAdmissionPolicyBinding"):
        spec = binding["spec"]
        policy = policies.get(spec["policyName"])
        if policy is None or "Deny" not in spec.get("validationActions", []):
            continue
        if not _resources_match(policy["spec"].get("matchConstraints"), request, namespaces):
            continue
        if not _resources_match(spec.get("matchResources"), request, namespaces):
            continue
        name = f"{spec['policyName']} (binding {binding['metadata']['name']})"
        variables: dict[str, Any] = {
            "object": request["object"],
            "oldObject": request["oldObject"],
            "request": {k: v for k, v in request.items() if k not in ("object", "oldObject")},
            "namespaceObject": namespace_object,
            "params": None,
        }
        if policy["spec"].get("paramKind"):
            ref = spec.get("paramRef") or {}
            param = params.get((ref.get("namespace") or request["namespace"], ref.get("name")))
            if param is None:
                if ref.get("parameterNotFoundAction") == "Deny":
                    reasons.append(f"{name}: its parameter {ref.get('name')} does not exist")
                continue
            variables["params"] = param
        activation = celpy.json_to_cel(variables)
        conditions = policy["spec"].get("matchConditions") or []
        if not all(_holds(evaluate_cel(c["expression"], activation)) for c in conditions):
            continue
        for variable in policy["spec"].get("variables") or []:
            value = evaluate_cel(variable["expression"], activation)
            activation.setdefault(celpy.celtypes.StringType("variables"), celpy.celtypes.MapType())[
                celpy.celtypes.StringType(variable["name"])
            ] = value
        for validation in policy["spec"].get("validations") or []:
            result = evaluate_cel(validation["expression"], activation)
            if isinstance(result, CELEvalError):
                reasons.append(f"{name}: expression failed ({result.args[0]}), failurePolicy Fail")
            elif not _holds(result):
                reasons.append(f"{name}: {validation.get('message', validation['expression'])}")
    return AdmissionResult(allowed=not reasons, reasons=tuple(reasons))
