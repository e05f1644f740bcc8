"""The ``authorizer`` CEL variable of ValidatingAdmissionPolicies, over the sandbox's RBAC.

``authorizer.group('apps').resource('deployments').namespace('x').name('y').check('update')
.allowed()``, ``authorizer.path('/healthz').check('get').reason()``,
``authorizer.serviceAccount('ns', 'sa')...``, ``authorizer.requestResource.check('delete')``.
The checks are CEL maps tagged with their role; the member functions below build and answer
them, asking the authorizer of the request being admitted (held per thread while a policy
is evaluated).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from celpy import celtypes

from .authn import UserInfo, service_account_user
from .rbac import Attributes

_current = threading.local()
S = celtypes.StringType


def _map(**values: Any) -> celtypes.MapType:
    return celtypes.MapType({S(k): v for k, v in values.items()})


def _get(target: Any, key: str, default: str = "") -> str:
    # A celtypes.MapType's get() raises for a missing key, so test membership first.
    if not isinstance(target, dict) or S(key) not in target:
        return default
    return str(target[S(key)])


def variable(user: UserInfo, resource: dict) -> celtypes.MapType:
    """The ``authorizer`` value for one admission request."""
    base = {
        "kind": S("authorizer"),
        "user": S(user.username),
        "groups": celtypes.ListType([S(g) for g in user.groups]),
    }
    request = _map(
        **base,
        check=S("resource"),
        group=S(resource.get("group", "")),
        resource=S(resource.get("resource", "")),
        subresource=S(resource.get("subresource", "")),
        namespace=S(resource.get("namespace", "")),
        name=S(resource.get("name", "")),
    )
    return _map(**base, requestResource=request)


@contextmanager
def using(authorizer: Any) -> Iterator[None]:
    _current.authorizer = authorizer
    try:
        yield
    finally:
        _current.authorizer = None


def _with(target: Any, **changes: Any) -> celtypes.MapType:
    copied = celtypes.MapType(target)
    for key, value in changes.items():
        copied[S(key)] = S(value) if isinstance(value, str) else value
    return copied


def _check(target: Any, verb: Any) -> celtypes.MapType:
    groups = target[S("groups")] if S("groups") in target else []  # noqa: SIM401 - see _get
    user = UserInfo(_get(target, "user"), groups=tuple(str(g) for g in groups))
    if _get(target, "check") == "path":
        attrs = Attributes(str(verb), resource_request=False, path=_get(target, "path"))
    else:
        attrs = Attributes(
            str(verb),
            api_group=_get(target, "group"),
            resource=_get(target, "resource"),
            subresource=_get(target, "subresource"),
            namespace=_get(target, "namespace"),
            name=_get(target, "name"),
        )
    authorizer = getattr(_current, "authorizer", None)
    allowed, reason = authorizer.authorize(user, attrs) if authorizer else (False, "")
    return _map(kind=S("decision"), allowed=celtypes.BoolType(allowed), reason=S(reason))


def _service_account(target: Any, namespace: Any, name: Any) -> celtypes.MapType:
    account = service_account_user(str(namespace), str(name))
    return _with(
        target, user=account.username, groups=celtypes.ListType([S(g) for g in account.groups])
    )


FUNCTIONS = {
    "path": lambda t, p: _with(t, check="path", path=str(p)),
    "group": lambda t, g: _with(t, check="resource", group=str(g)),
    "resource": lambda t, r: _with(t, resource=str(r)),
    "subresource": lambda t, s: _with(t, subresource=str(s)),
    "namespace": lambda t, n: _with(t, namespace=str(n)),
    "name": lambda t, n: _with(t, name=str(n)),
    "check": _check,
    "allowed": lambda d: d[S("allowed")],
    "reason": lambda d: d[S("reason")],
    "errored": lambda d: celtypes.BoolType(False),
    "error": lambda d: S(""),
    "serviceAccount": _service_account,
}
