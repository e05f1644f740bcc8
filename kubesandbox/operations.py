"""What each verb does to the store, once the request is routed and authorized."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import reviews
from .errors import ApiError
from .objects import APPLY_PATCH, JSON_PATCH
from .patching import json_patch, merge_patch

if TYPE_CHECKING:
    from .authn import UserInfo
    from .handler import Handler, Route
    from .server import KubeSandbox


class Operations:
    def __init__(self, sandbox: KubeSandbox) -> None:
        self.sandbox = sandbox

    def run(
        self, handler: Handler, route: Route, verb: str, body: bytes, user: UserInfo
    ) -> tuple[int, dict]:
        store = self.sandbox.store
        rt, namespace, name, sub = route.rt, route.namespace, route.name, route.subresource
        query = handler.query
        dry_run = bool(query.get("dryRun"))
        manager = query.get("fieldManager")
        writer = manager or handler._default_manager()
        if rt.virtual:
            reply = reviews.answer(
                rt,
                handler._parse(body),
                user,
                namespace,
                authorizer=self.sandbox.authorizer,
                authenticator=self.sandbox.authenticator,
            )
            return 201, reply
        if sub == "token":
            account = store.get(rt, namespace, name or "")
            parsed = handler._parse(body, allow_empty=True)
            return 201, reviews.token_request(parsed, account, self.sandbox.authenticator)
        if sub == "scale":
            return self._scale(handler, route, verb, body, user)
        if verb == "get":
            return 200, store.get(rt, namespace, name or "")
        if verb == "list":
            limit = query.get("limit")
            return 200, store.list_objects(
                rt,
                namespace,
                label_selector=query.get("labelSelector"),
                field_selector=query.get("fieldSelector"),
                limit=int(limit) if limit and limit.isdigit() else None,
                continue_token=query.get("continue"),
            )
        ctx = handler.write_context(user, sub, dry_run)
        if verb == "create":
            return 201, store.create(
                rt, namespace, handler._parse(body), manager=writer, dry_run=dry_run, ctx=ctx
            )
        if verb == "update":
            return 200, store.replace(
                rt,
                namespace,
                name or "",
                handler._parse(body),
                manager=writer,
                subresource=sub,
                dry_run=dry_run,
                ctx=ctx,
            )
        if verb == "patch":
            patch_type = handler.patch_type()
            obj, created = store.patch(
                rt,
                namespace,
                name or "",
                patch_type,
                handler.parse_patch(body, patch_type),
                # Apply needs an explicit fieldManager; other writes default to the client's.
                manager=manager if patch_type == APPLY_PATCH else writer,
                force=query.get("force") == "true",
                subresource=sub,
                dry_run=dry_run,
                ctx=ctx,
            )
            return (201 if created else 200), obj
        options: Any = handler._parse(body, allow_empty=True) or {}
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

    def _scale(
        self, handler: Handler, route: Route, verb: str, body: bytes, user: UserInfo
    ) -> tuple[int, dict]:
        """The ``scale`` subresource: an autoscaling/v1 Scale over ``spec.replicas``."""
        store = self.sandbox.store
        rt, namespace, name = route.rt, route.namespace, route.name or ""
        current = store.get(rt, namespace, name)
        scale = _scale_of(current)
        if verb == "get":
            return 200, scale
        if verb == "update":
            wanted = handler._parse(body)
        else:
            patch_type = handler.patch_type()
            patch = handler.parse_patch(body, patch_type)
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
        ctx = handler.write_context(user, "scale", bool(handler.query.get("dryRun")))
        stored = store.replace(
            rt,
            namespace,
            name,
            updated,
            manager=handler._default_manager(),
            subresource="scale",
            dry_run=ctx.dry_run,
            ctx=ctx,
        )
        return 200, _scale_of(stored)


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
