"""ValidatingAdmissionPolicy enforcement (admissionregistration.k8s.io/v1), in CEL with
``cel-python``.

For each write (CREATE, UPDATE, DELETE) every binding whose policy exists is considered: the
policy's ``matchConstraints`` and the binding's ``matchResources`` must both match
(resourceRules with operations, excludeResourceRules, namespaceSelector, objectSelector),
the params are found (``paramKind`` + ``paramRef`` by name or selector;
``parameterNotFoundAction``), ``matchConditions`` must all hold, ``variables`` are computed,
then each validation is evaluated with ``object``, ``oldObject``, ``request``, ``params``,
``namespaceObject``, ``variables`` and ``authorizer`` (the sandbox's RBAC, ``celauthz``). A
false validation is reported per the binding's ``validationActions``: Deny refuses the
request (status from the validation's ``reason``, Invalid/422 by default), Warn adds a
``Warning`` header, Audit is accepted and ignored. An expression that fails to evaluate
follows ``failurePolicy`` (Fail by default).

``admissionrequest`` builds what a policy sees of the request and decides what matches it;
``celenv`` compiles and evaluates the expressions.

Not done: type checking of policies (``status.typeChecking``), ``auditAnnotations``, CEL
cost limits, and matchPolicy Equivalent across API versions.
"""

from __future__ import annotations

from typing import Any

import celpy
from celpy import celtypes

from . import celauthz
from .admissionrequest import AdmissionRequest, matches, namespace_object_of
from .celenv import EvalError, evaluate, is_true
from .errors import ApiError
from .resources import ADMISSION, ResourceType
from .selectors import matches_label_selector
from .storeview import ControlledStore

_CODES = {"Unauthorized": 401, "Forbidden": 403, "Invalid": 422, "RequestEntityTooLarge": 413}
# Policies never apply to the objects that configure admission (upstream avoids lock-outs so).
_EXEMPT = {
    (ADMISSION, p)
    for p in (
        "validatingadmissionpolicies",
        "validatingadmissionpolicybindings",
        "validatingwebhookconfigurations",
        "mutatingwebhookconfigurations",
    )
}


# -- the admission controller ---------------------------------------------------------------


class PolicyAdmission:
    """Evaluates the stored policies for a write; used from the store's admission hook."""

    def __init__(self, store: ControlledStore, authorizer: Any = None) -> None:
        self.store = store
        self.authorizer = authorizer

    def _params(self, policy: dict, binding: dict, req: AdmissionRequest) -> list[dict] | None:
        """The param objects to evaluate with ([None] when the policy takes none); None when
        they are missing and the binding says to deny."""
        kind = policy["spec"].get("paramKind")
        if not kind:
            return [None]  # type: ignore[list-item]
        ref = binding["spec"].get("paramRef") or {}
        group, _, version = (kind.get("apiVersion") or "").rpartition("/")
        rt = self.store.registry.by_kind(group, version, kind.get("kind", ""))
        found: list[dict] = []
        if rt is not None:
            namespace = (ref.get("namespace") or req.namespace) if rt.namespaced else ""
            for obj in self.store.stored(rt.group, rt.plural, namespace or ""):
                meta = obj["metadata"]
                if ref.get("name"):
                    if meta["name"] == ref["name"]:
                        found.append(obj)
                elif "selector" in ref and matches_label_selector(
                    ref["selector"], meta.get("labels")
                ):
                    found.append(obj)
        if not found and ref.get("parameterNotFoundAction", "Deny") == "Deny":
            return None
        return found

    def admit(
        self,
        operation: str,
        rt: ResourceType,
        subresource: str,
        obj: dict | None,
        old: dict | None,
        user: Any,
        dry_run: bool,
    ) -> list[str]:
        """Raise ApiError to deny; return warnings (Warn actions)."""
        if (rt.group, rt.plural) in _EXEMPT or rt.virtual:
            return []
        policies = {
            p["metadata"]["name"]: p
            for p in self.store.stored(ADMISSION, "validatingadmissionpolicies")
        }
        bindings = sorted(
            self.store.stored(ADMISSION, "validatingadmissionpolicybindings"),
            key=lambda b: b["metadata"]["name"],
        )
        if not bindings:
            return []
        namespace_object = None
        source = obj if obj is not None else old or {}
        ns = (source.get("metadata") or {}).get("namespace") if rt.namespaced else None
        if ns:
            namespace_object = namespace_object_of(
                self.store.stored_object("", "namespaces", "", ns)
            )
        req = AdmissionRequest(
            operation, rt, subresource, obj, old, user, namespace_object, dry_run
        )
        warnings: list[str] = []
        for binding in bindings:
            spec = binding.get("spec") or {}
            policy = policies.get(spec.get("policyName", ""))
            if policy is None:
                continue
            if not matches(policy["spec"].get("matchConstraints"), req):
                continue
            if not matches(spec.get("matchResources"), req):
                continue
            with celauthz.using(self.authorizer):
                warnings += self._evaluate(policy, binding, req)
        return warnings

    def _evaluate(self, policy: dict, binding: dict, req: AdmissionRequest) -> list[str]:
        spec = binding.get("spec") or {}
        actions = spec.get("validationActions") or []
        label = (
            f"ValidatingAdmissionPolicy '{policy['metadata']['name']}' with binding "
            f"'{binding['metadata']['name']}'"
        )
        fail_closed = policy["spec"].get("failurePolicy", "Fail") == "Fail"
        params_list = self._params(policy, binding, req)
        if params_list is None:
            if "Deny" in actions:
                raise ApiError(
                    403,
                    f"{label} denied request: failed to configure binding: no "
                    "params found for policy binding with `Deny` "
                    "parameterNotFoundAction",
                )
            return []
        warnings: list[str] = []
        for params in params_list:
            activation = celpy.json_to_cel(
                {
                    "object": req.obj,
                    "oldObject": req.old,
                    "request": req.request,
                    "params": params,
                    "namespaceObject": req.namespace_object,
                }
            )
            activation[celtypes.StringType("authorizer")] = celauthz.variable(
                req.user,
                {
                    **req.request["resource"],
                    "subresource": req.subresource,
                    "namespace": req.namespace,
                    "name": req.request["name"],
                },
            )
            try:
                if not all(
                    is_true(c["expression"], activation)
                    for c in policy["spec"].get("matchConditions") or []
                ):
                    continue
                variables = celtypes.MapType()
                activation[celtypes.StringType("variables")] = variables
                for variable in policy["spec"].get("variables") or []:
                    variables[celtypes.StringType(variable["name"])] = evaluate(
                        variable["expression"], activation
                    )
            except EvalError as error:
                if fail_closed and "Deny" in actions:
                    raise ApiError(403, f"{label} denied request: {error}") from error
                continue
            for validation in policy["spec"].get("validations") or []:
                expression = validation["expression"]
                try:
                    if is_true(expression, activation):
                        continue
                    message = self._message(validation, activation)
                    code = _CODES.get(validation.get("reason") or "Invalid", 422)
                except EvalError as error:
                    if not fail_closed:
                        continue
                    message = f"expression '{expression}' resulted in error: {error}"
                    code = 403
                if "Deny" in actions:
                    raise ApiError(
                        code,
                        f"{label} denied request: {message}",
                        reason=validation.get("reason") or "Invalid",
                    )
                if "Warn" in actions:
                    warnings.append(f"Validation failed for {label}: {message}")
        return warnings

    @staticmethod
    def _message(validation: dict, activation: dict) -> str:
        if validation.get("messageExpression"):
            try:
                result = evaluate(validation["messageExpression"], activation)
                if isinstance(result, str) and result.strip():
                    return str(result)
            except EvalError:
                pass
        if validation.get("message"):
            return validation["message"]
        return f"failed expression: {validation['expression']}"
