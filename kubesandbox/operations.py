"""What each verb does to the store, once the request is routed and authorized."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import bodies, quota, reviews
from .authn import Authenticator, UserInfo
from .errors import ApiError
from .objects import APPLY_PATCH, JSON_PATCH, WriteContext
from .patching import json_patch, merge_patch
from .rbac import Authorizer
from .resources import ResourceType
from .routing import Route
from .store import Store
from .validation import WARN


@dataclass
class Call:
    """One routed and authorized API request, as the verbs see it."""

    route: Route
    verb: str
    body: bytes
    user: UserInfo
    query: dict[str, str]
    content_type: str | None
    user_agent: str | None
    warnings: list[str]  # the answer's Warning headers: writes add theirs

    def parse_body(self, *, allow_empty: bool = False) -> Any:
        return bodies.parse(self.body, self.content_type, allow_empty=allow_empty)

    def patch(self) -> tuple[str, Any]:
        """The patch format the Content-Type names, and the patch."""
        patch_type = bodies.patch_type(self.content_type)
        return patch_type, bodies.parse_patch(self.body, patch_type)

    @property
    def default_manager(self) -> str:
        # The real server names an unnamed writer after its User-Agent's product.
        return (self.user_agent or "unknown").split("/")[0]

    def write_context(self, dry_run: bool) -> WriteContext:
        return WriteContext(
            user=self.user,
            field_validation=self.query.get("fieldValidation") or WARN,
            subresource=self.route.subresource,
            dry_run=dry_run,
            warnings=self.warnings,
        )


class Operations:
    def __init__(
        self, store: Store, *, authorizer: Authorizer, authenticator: Authenticator
    ) -> None:
        self.store = store
        self.authorizer = authorizer
        self.authenticator = authenticator

    def run(self, call: Call) -> tuple[int, dict]:
        store = self.store
        route, verb, user = call.route, call.verb, call.user
        rt, namespace, name, sub = route.rt, route.namespace, route.name, route.subresource
        query = call.query
        dry_run = bool(query.get("dryRun"))
        manager = query.get("fieldManager")
        writer = manager or call.default_manager
        if rt.virtual:
            reply = reviews.answer(
                rt,
                call.parse_body(),
                user,
                namespace,
                authorizer=self.authorizer,
                authenticator=self.authenticator,
            )
            return 201, reply
        if sub == "token":
            account = store.get(rt, namespace, name or "")
            parsed = call.parse_body(allow_empty=True)
            # A TokenRequest is a CREATE of serviceaccounts/token: admission sees it, as
            # kube-apiserver's policies do.
            asked = {
                "apiVersion": "authentication.k8s.io/v1",
                "kind": "TokenRequest",
                **(parsed if isinstance(parsed, dict) else {}),
                "metadata": {"name": name, "namespace": namespace},
            }
            if store.admission is not None:
                store.admission("CREATE", rt, asked, None, call.write_context(dry_run))
            return 201, reviews.token_request(parsed, account, self.authenticator)
        if sub == "scale":
            return self._scale(call)
        if verb == "get":
            return 200, served(store, rt, store.get(rt, namespace, name or ""))
        if verb == "list":
            limit = query.get("limit")
            return 200, served(
                store,
                rt,
                store.list_objects(
                    rt,
                    namespace,
                    label_selector=query.get("labelSelector"),
                    field_selector=query.get("fieldSelector"),
                    limit=int(limit) if limit and limit.isdigit() else None,
                    continue_token=query.get("continue"),
                ),
            )
        ctx = call.write_context(dry_run)
        if verb == "create":
            return 201, store.create(
                rt, namespace, call.parse_body(), manager=writer, dry_run=dry_run, ctx=ctx
            )
        if verb == "update":
            return 200, store.replace(
                rt,
                namespace,
                name or "",
                call.parse_body(),
                manager=writer,
                subresource=sub,
                dry_run=dry_run,
                ctx=ctx,
            )
        if verb == "patch":
            patch_type, patch = call.patch()
            obj, created = store.patch(
                rt,
                namespace,
                name or "",
                patch_type,
                patch,
                # Apply needs an explicit fieldManager; other writes default to the client's.
                manager=manager if patch_type == APPLY_PATCH else writer,
                force=query.get("force") == "true",
                subresource=sub,
                dry_run=dry_run,
                ctx=ctx,
            )
            return (201 if created else 200), obj
        options: Any = call.parse_body(allow_empty=True) or {}
        dry_run = dry_run or bool(options.get("dryRun"))
        ctx.dry_run = dry_run
        if verb == "delete":
            return 200, store.delete(
                rt,
                namespace,
                name or "",
                preconditions=options.get("preconditions"),
                dry_run=dry_run,
                ctx=ctx,
            )
        if verb == "deletecollection":
            return 200, store.delete_collection(
                rt,
                namespace,
                label_selector=query.get("labelSelector"),
                field_selector=query.get("fieldSelector"),
                dry_run=dry_run,
                ctx=ctx,
            )
        raise ApiError(405, "the server does not allow this method on the requested resource")

    def _scale(self, call: Call) -> tuple[int, dict]:
        """The ``scale`` subresource: an autoscaling/v1 Scale over ``spec.replicas``."""
        store, verb = self.store, call.verb
        rt, namespace, name = call.route.rt, call.route.namespace, call.route.name or ""
        current = store.get(rt, namespace, name)
        scale = _scale_of(current)
        if verb == "get":
            return 200, scale
        if verb == "update":
            wanted = call.parse_body()
        else:
            patch_type, patch = call.patch()
            wanted = (
                json_patch(scale, patch) if patch_type == JSON_PATCH else merge_patch(scale, patch)
            )
        replicas = ((wanted or {}).get("spec") or {}).get("replicas")
        if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
            raise ApiError(
                422,
                f'Scale.autoscaling "{name}" is invalid: spec.replicas: Invalid '
                f"value: {replicas!r}: must be greater than or equal to 0",
            )
        sent_version = ((wanted or {}).get("metadata") or {}).get("resourceVersion")
        updated = {**current, "spec": {**current.get("spec", {}), "replicas": replicas}}
        updated["metadata"] = {
            **current["metadata"],
            "resourceVersion": sent_version or current["metadata"]["resourceVersion"],
        }
        ctx = call.write_context(bool(call.query.get("dryRun")))
        stored = store.replace(
            rt,
            namespace,
            name,
            updated,
            manager=call.default_manager,
            subresource="scale",
            dry_run=ctx.dry_run,
            ctx=ctx,
        )
        return 200, _scale_of(stored)


def served(store: Store, rt: ResourceType, answer: dict) -> dict:
    """What a read answers: as stored, but a ResourceQuota with the status its controller
    would keep (``quota``)."""
    if (rt.group, rt.plural) == ("", "resourcequotas"):
        return quota.served(store, answer)
    return answer


def _scale_of(obj: dict) -> dict:
    meta = obj["metadata"]
    selector = ((obj.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            k: meta[k]
            for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
            if k in meta
        },
        "spec": {"replicas": (obj.get("spec") or {}).get("replicas", 1)},
        "status": {
            "replicas": (obj.get("status") or {}).get("replicas", 0),
            "selector": ",".join(f"{k}={v}" for k, v in sorted(selector.items())),
        },
    }
