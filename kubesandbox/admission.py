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

Not done: type checking of policies (``status.typeChecking``), ``auditAnnotations``, CEL
cost limits, and matchPolicy Equivalent across API versions.
"""

from __future__ import annotations

import functools
import uuid
from typing import Any

import celpy
from celpy import CELEvalError, celtypes

from . import celauthz
from .errors import ApiError
from .resources import ADMISSION, NAMESPACES, ResourceType
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


# -- CEL: the environment, with some of the Kubernetes string library -----------------------


def _lower(s: Any) -> Any:
    return celtypes.StringType(str(s).lower())


def _upper(s: Any) -> Any:
    return celtypes.StringType(str(s).upper())


def _trim(s: Any) -> Any:
    return celtypes.StringType(str(s).strip())


def _split(s: Any, sep: Any) -> Any:
    return celtypes.ListType([celtypes.StringType(p) for p in str(s).split(str(sep))])


def _join(items: Any, sep: Any = "") -> Any:
    return celtypes.StringType(str(sep).join(str(i) for i in items))


def _replace(s: Any, old: Any, new: Any) -> Any:
    return celtypes.StringType(str(s).replace(str(old), str(new)))


def _index_of(s: Any, sub: Any) -> Any:
    return celtypes.IntType(str(s).find(str(sub)))


def _not_equal(a: Any, b: Any) -> Any:
    """`!=` with null on either side, as cel-go (heterogeneous equality) answers it:
    `oldObject != null` is how a policy asks whether a request has an old object, and
    cel-python raises "no such overload" for a map or list against null."""
    if a is None or b is None:
        return celtypes.BoolType(a is not b)
    return celpy.evaluation.bool_ne(a, b)


def _string(value: Any) -> Any:
    """`string()`, with a bool spelt as cel-go spells it (true, not Python's True)."""
    if isinstance(value, celtypes.BoolType):
        return celtypes.StringType("true" if value else "false")
    return celtypes.StringType(value)


_FUNCTIONS = {
    "string": _string,
    "lowerAscii": _lower,
    "upperAscii": _upper,
    "trim": _trim,
    "split": _split,
    "join": _join,
    "replace": _replace,
    "indexOf": _index_of,
    "_!=_": _not_equal,
    **celauthz.FUNCTIONS,
}
_ENV = celpy.Environment()


@functools.lru_cache(maxsize=512)
def _program(expression: str) -> Any:
    return _ENV.program(_ENV.compile(expression), functions=_FUNCTIONS)


class _EvalError(Exception):
    pass


def evaluate(expression: str, activation: dict) -> Any:
    try:
        result = _program(expression).evaluate(activation)
    except CELEvalError as error:
        raise _EvalError(str(error.args[0] if error.args else error)) from error
    except Exception as error:  # compile errors, type errors inside cel-python
        raise _EvalError(str(error)) from error
    if isinstance(result, CELEvalError):
        raise _EvalError(str(result.args[0] if result.args else result))
    return result


def _true(expression: str, activation: dict) -> bool:
    result = evaluate(expression, activation)
    if not isinstance(result, celtypes.BoolType):
        raise _EvalError(f"expression must return bool, not {type(result).__name__}")
    return bool(result)


# -- matching -------------------------------------------------------------------------------


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


def _matches(match: dict | None, req: _Request) -> bool:
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


def _namespace_object(namespace: dict | None) -> dict | None:
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


class _Request:
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


# -- the admission controller ---------------------------------------------------------------


class PolicyAdmission:
    """Evaluates the stored policies for a write; used from the store's admission hook."""

    def __init__(self, store: ControlledStore, authorizer: Any = None) -> None:
        self.store = store
        self.authorizer = authorizer

    def _params(self, policy: dict, binding: dict, req: _Request) -> list[dict] | None:
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
            namespace_object = _namespace_object(self.store.stored_object("", "namespaces", "", ns))
        req = _Request(operation, rt, subresource, obj, old, user, namespace_object, dry_run)
        warnings: list[str] = []
        for binding in bindings:
            spec = binding.get("spec") or {}
            policy = policies.get(spec.get("policyName", ""))
            if policy is None:
                continue
            if not _matches(policy["spec"].get("matchConstraints"), req):
                continue
            if not _matches(spec.get("matchResources"), req):
                continue
            with celauthz.using(self.authorizer):
                warnings += self._evaluate(policy, binding, req)
        return warnings

    def _evaluate(self, policy: dict, binding: dict, req: _Request) -> list[str]:
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
                    _true(c["expression"], activation)
                    for c in policy["spec"].get("matchConditions") or []
                ):
                    continue
                variables = celtypes.MapType()
                activation[celtypes.StringType("variables")] = variables
                for variable in policy["spec"].get("variables") or []:
                    variables[celtypes.StringType(variable["name"])] = evaluate(
                        variable["expression"], activation
                    )
            except _EvalError as error:
                if fail_closed and "Deny" in actions:
                    raise ApiError(403, f"{label} denied request: {error}") from error
                continue
            for validation in policy["spec"].get("validations") or []:
                expression = validation["expression"]
                try:
                    if _true(expression, activation):
                        continue
                    message = self._message(validation, activation)
                    code = _CODES.get(validation.get("reason") or "Invalid", 422)
                except _EvalError as error:
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
            except _EvalError:
                pass
        if validation.get("message"):
            return validation["message"]
        return f"failed expression: {validation['expression']}"
