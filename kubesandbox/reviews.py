"""The APIs that answer without storing anything: access reviews, SelfSubjectReview
(``kubectl auth whoami``), TokenReview and the TokenRequest subresource."""

from __future__ import annotations

from typing import Any

from .authn import Authenticator, UserInfo, with_authenticated
from .errors import ApiError, bad_request
from .rbac import Attributes, Authorizer
from .resources import AUTHN, AUTHZ, ResourceType


def _attributes(spec: dict, namespace: str = "") -> Attributes:
    resource = spec.get("resourceAttributes")
    if resource is not None:
        return Attributes(
            verb=resource.get("verb", ""),
            api_group=resource.get("group", ""),
            resource=resource.get("resource", ""),
            subresource=resource.get("subresource", ""),
            namespace=namespace or resource.get("namespace", ""),
            name=resource.get("name", ""),
        )
    non_resource = spec.get("nonResourceAttributes")
    if non_resource is not None:
        return Attributes(
            verb=non_resource.get("verb", ""),
            resource_request=False,
            path=non_resource.get("path", ""),
        )
    raise ApiError(
        422,
        "exactly one of nonResourceAttributes or resourceAttributes must be specified",
        details={"causes": [{"reason": "FieldValueRequired", "field": "spec.resourceAttributes"}]},
    )


def _access_status(authorizer: Authorizer, user: UserInfo, attrs: Attributes) -> dict:
    # A wildcard question ("can I * *?") is answered by wildcard rules only, as upstream.
    allowed, reason = authorizer.authorize(user, attrs)
    status: dict = {"allowed": allowed}
    if reason:
        status["reason"] = reason
    return status


def answer(
    rt: ResourceType,
    body: dict,
    user: UserInfo,
    namespace: str | None,
    *,
    authorizer: Authorizer,
    authenticator: Authenticator,
) -> dict:
    """The reply to a create of a review type: the body with its status filled in."""
    reply = {**body, "apiVersion": rt.api_version, "kind": rt.kind}
    reply.setdefault("metadata", {})
    spec = body.get("spec") or {}
    if (rt.group, rt.kind) == (AUTHZ, "SelfSubjectAccessReview"):
        reply["status"] = _access_status(authorizer, user, _attributes(spec))
    elif (rt.group, rt.kind) in (
        (AUTHZ, "SubjectAccessReview"),
        (AUTHZ, "LocalSubjectAccessReview"),
    ):
        if not spec.get("user") and not spec.get("groups"):
            raise ApiError(
                422,
                f'{rt.kind}.authorization.k8s.io "" is invalid: spec.user: '
                'Invalid value: "": at least one of user or group must be '
                "specified",
            )
        subject = UserInfo(
            spec.get("user", ""), spec.get("uid", ""), tuple(spec.get("groups") or ())
        )
        attrs = _attributes(spec, namespace or "")
        reply["status"] = _access_status(authorizer, subject, attrs)
    elif (rt.group, rt.kind) == (AUTHZ, "SelfSubjectRulesReview"):
        rules = authorizer.rules_for(user, spec.get("namespace", ""))
        reply["status"] = {
            "resourceRules": [
                {k: r[k] for k in ("verbs", "apiGroups", "resources", "resourceNames") if k in r}
                for r in rules
                if not r.get("nonResourceURLs")
            ],
            "nonResourceRules": [
                {"verbs": r["verbs"], "nonResourceURLs": r["nonResourceURLs"]}
                for r in rules
                if r.get("nonResourceURLs")
            ],
            "incomplete": False,
        }
    elif (rt.group, rt.kind) == (AUTHN, "SelfSubjectReview"):
        reply["status"] = {"userInfo": user.as_dict()}
    elif (rt.group, rt.kind) == (AUTHN, "TokenReview"):
        found = authenticator.user_for_token(spec.get("token") or "")
        reply["status"] = (
            {
                "authenticated": True,
                "user": with_authenticated(found).as_dict(),
                "audiences": spec.get("audiences") or [],
            }
            if found
            else {"authenticated": False, "user": {}}
        )
    else:
        raise bad_request(f"{rt.kind} cannot be created here")
    return reply


def token_request(body: Any, service_account: dict, authenticator: Authenticator) -> dict:
    """``POST .../serviceaccounts/<name>/token``: a TokenRequest with a fresh token."""
    body = body or {}
    if not isinstance(body, dict):
        raise bad_request("the request body must be a TokenRequest")
    spec = dict(body.get("spec") or {})
    seconds = int(spec.get("expirationSeconds") or 3600)
    if seconds < 600:
        raise ApiError(
            422,
            'TokenRequest.authentication.k8s.io "" is invalid: '
            "spec.expirationSeconds: Invalid value: "
            f"{seconds}: may not specify a duration less than 10 minutes",
        )
    meta = service_account["metadata"]
    token, expires = authenticator.mint(
        meta["namespace"],
        meta["name"],
        meta["uid"],
        expiration_seconds=seconds,
        audiences=tuple(spec.get("audiences") or ()),
    )
    spec["expirationSeconds"] = seconds
    if not spec.get("audiences"):  # none asked (or an empty list): the API server's own
        spec["audiences"] = ["https://kubernetes.default.svc.cluster.local"]
    return {
        "kind": "TokenRequest",
        "apiVersion": f"{AUTHN}/v1",
        "metadata": {
            "name": meta["name"],
            "namespace": meta["namespace"],
            "creationTimestamp": None,
        },
        "spec": spec,
        "status": {"token": token, "expirationTimestamp": expires},
    }
