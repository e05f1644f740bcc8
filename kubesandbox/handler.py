"""The HTTP side of the stand-in: authentication, impersonation, authorization, routing,
request bodies (JSON, YAML, protobuf), discovery, OpenAPI, CRUD and watch."""

from __future__ import annotations

import json
import ssl
import sys
import time
import traceback
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from . import discovery, hooks, routing, selectors, tables, watch
from .authn import SA_PREFIX, UserInfo, service_account_user, with_authenticated
from .errors import ApiError, method_not_allowed, status_body
from .openapiv2 import Binary
from .operations import Call, served
from .rbac import Attributes, forbidden_message
from .resources import AUTHN, NAMESPACES, ResourceType
from .routing import Route
from .sandboxview import Sandbox

IDLE_CONNECTION_SECONDS = 120
DEFAULT_WATCH_SECONDS = 1800


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as urllib3 pools connections
    # Headers and body go out in separate writes; with Nagle on, each response would
    # wait ~40 ms for the client's delayed ACK.
    disable_nagle_algorithm = True
    timeout = IDLE_CONNECTION_SECONDS
    server: Any

    def do_GET(self) -> None:
        self._handle()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_GET

    def log_message(self, format: str, *args: Any) -> None:
        if self.sandbox.verbose:
            sys.stderr.write(f"kubesandbox: {format % args}\n")

    @property
    def sandbox(self) -> Sandbox:
        return self.server.sandbox

    # -- plumbing ------------------------------------------------------------------------

    def _handle(self) -> None:
        sandbox = self.sandbox
        url = urlsplit(self.path)
        path = url.path.rstrip("/") or "/"
        self.query = {key: values[-1] for key, values in parse_qs(url.query).items()}
        self.warnings: list[str] = []
        length = self.headers.get("Content-Length") or "0"
        body = self.rfile.read(int(length) if length.isdigit() else 0)
        user = sandbox.authenticator.authenticate(self.headers.get("Authorization"))
        username = user.username if user else ""
        fault = None
        try:
            if user is None:
                raise ApiError(401, "Unauthorized")
            user = self._impersonate(user)
            username = user.username
            if path.startswith("/_sandbox"):
                if not user.is_admin:
                    raise ApiError(403, f'User "{user.username}" may not use the sandbox hooks')
                code, payload = hooks.control(
                    sandbox, self.command, path, body, self.headers.get("Content-Type")
                )
            else:
                fault = sandbox.faults.take(self.command, path)
                if fault and fault.delay:
                    sandbox.stopping.wait(fault.delay)
                if fault and fault.status:
                    code, payload = fault.status, status_body(fault.status, fault.message)
                else:
                    fault = None
                    code, payload = self._dispatch(path, body, user)
        except ApiError as error:
            code, payload = error.code, error.status()
        except Exception as error:  # a bug in the sandbox must still answer like a server
            traceback.print_exc()
            code, payload = 500, status_body(500, f"kubesandbox internal error: {error!r}")
        if not path.startswith("/_sandbox"):
            sandbox.record(
                self.command, path, url.query, code, injected=fault is not None, user=username
            )
        if code >= 0:  # a watch has answered already
            self._send(code, payload)

    def _send(self, code: int, payload: dict | str | Binary) -> None:
        if isinstance(payload, Binary):
            data, content_type = payload.data, payload.content_type
        elif isinstance(payload, str):
            data, content_type = payload.encode(), "text/plain; charset=utf-8"
        else:
            data, content_type = json.dumps(payload).encode(), "application/json"
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for warning in dict.fromkeys(self.warnings):
            # RFC 7234 warn-text is a quoted-string, as kube-apiserver writes it.
            text = warning.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")
            self.send_header("Warning", f'299 - "{text}"')
        self.end_headers()
        self.wfile.write(data)

    # -- authentication and authorization -------------------------------------------------

    def _impersonate(self, user: UserInfo) -> UserInfo:
        name = self.headers.get("Impersonate-User")
        groups = self.headers.get_all("Impersonate-Group") or []
        uid = self.headers.get("Impersonate-Uid")
        extra = {
            k[len("Impersonate-Extra-") :].lower(): self.headers.get_all(k)
            for k in self.headers
            if k.lower().startswith("impersonate-extra-")
        }
        if not name:
            if groups or uid or extra:
                raise ApiError(
                    400, "requested impersonation of groups, uid or extra without a user"
                )
            return user
        checks = []
        if name.startswith(SA_PREFIX):
            namespace, _, sa = name[len(SA_PREFIX) :].partition(":")
            checks.append(
                Attributes("impersonate", resource="serviceaccounts", namespace=namespace, name=sa)
            )
        else:
            checks.append(Attributes("impersonate", resource="users", name=name))
        checks += [Attributes("impersonate", resource="groups", name=g) for g in groups]
        if uid:
            checks.append(Attributes("impersonate", api_group=AUTHN, resource="uids", name=uid))
        checks += [
            Attributes(
                "impersonate", api_group=AUTHN, resource="userextras", subresource=key, name=value
            )
            for key, values in extra.items()
            for value in values
        ]
        for attrs in checks:
            self._authorize(user, attrs)
        if name.startswith(SA_PREFIX) and not groups:
            namespace, _, sa = name[len(SA_PREFIX) :].partition(":")
            return service_account_user(namespace, sa, uid or "")
        return with_authenticated(
            UserInfo(name, uid or "", tuple(groups), tuple((k, tuple(v)) for k, v in extra.items()))
        )

    def _authorize(self, user: UserInfo, attrs: Attributes) -> None:
        allowed, _ = self.sandbox.authorizer.authorize(user, attrs)
        if not allowed:
            details: dict = {}
            if attrs.resource_request:
                details = {"kind": attrs.resource}
                if attrs.name:
                    details["name"] = attrs.name
                if attrs.api_group:
                    details["group"] = attrs.api_group
            raise ApiError(403, forbidden_message(user, attrs), details=details)

    # -- routing -------------------------------------------------------------------------

    def _dispatch(self, path: str, body: bytes, user: UserInfo) -> tuple[int, dict | str | Binary]:
        # Split before unquoting: a %2F inside a name must not make a new segment.
        segments = [unquote(segment) for segment in path.strip("/").split("/")]
        route = (
            routing.route(self.sandbox.registry, segments)
            if routing.is_api_path(segments)
            else None
        )
        if isinstance(route, Route):
            return self._resource(route, body, user)
        self._authorize(user, Attributes("get", resource_request=False, path=path))
        if self.command != "GET":
            raise method_not_allowed()
        if route is not None:
            return 200, route
        return 200, discovery.non_resource(
            path,
            segments,
            registry=self.sandbox.registry,
            documents=self.sandbox.documents,
            version_info=self.sandbox.version_info,
            accept=self.headers.get("Accept") or "application/json",
            address="{}:{}".format(*self.server.server_address[:2]),
        )

    # -- the Kubernetes API --------------------------------------------------------------

    def _resource(self, route: Route, body: bytes, user: UserInfo) -> tuple[int, dict]:
        rt, namespace, name, sub = route.rt, route.namespace, route.name, route.subresource
        query = self.query
        if sub == "token":
            verb = {"POST": "create"}.get(self.command, "")
        else:
            verb = routing.VERBS.get((self.command, name is not None), "")
        watching = query.get("watch") in ("true", "1")
        if watching and verb in ("list", "get"):
            verb = "watch"
        allowed = rt.subresource_verbs(sub) if sub else rt.verbs
        cluster_wide = rt.namespaced and namespace is None
        if verb not in allowed or (cluster_wide and verb not in ("list", "watch")):
            raise method_not_allowed()
        attr_namespace = namespace or (name if rt is NAMESPACES else "") or ""
        self._authorize(
            user,
            Attributes(
                verb,
                api_group=rt.group,
                resource=rt.plural,
                subresource=sub,
                namespace=attr_namespace,
                name=name or "",
            ),
        )
        if verb == "watch":
            return self._watch(rt, namespace, name)
        call = Call(
            route,
            verb,
            body,
            user,
            query,
            content_type=self.headers.get("Content-Type"),
            user_agent=self.headers.get("User-Agent"),
            warnings=self.warnings,
        )
        code, answer = self.sandbox.operations.run(call)
        table_version = tables.table_version(self.headers.get("Accept") or "")
        if table_version and verb in ("get", "list") and not sub and not rt.virtual:
            # kubectl get asks the server to print (its columns, its empty-list message).
            answer = tables.table(
                rt,
                answer,
                version=table_version,
                include=self.query.get("includeObject") or "Metadata",
            )
        return code, answer

    # -- watch ---------------------------------------------------------------------------

    def _watch(self, rt: ResourceType, namespace: str | None, name: str | None) -> tuple[int, dict]:
        store = self.sandbox.store
        query = self.query
        field_selector = query.get("fieldSelector")
        if name:
            field_selector = ",".join(filter(None, [field_selector, f"metadata.name={name}"]))
        matches_labels = selectors.label_selector(query.get("labelSelector"))
        matches_fields = selectors.field_selector(field_selector, rt.kind)

        def matches(obj: dict) -> bool:
            return matches_labels(obj) and matches_fields(obj)

        requested = query.get("resourceVersion") or ""
        if requested and not requested.isdigit():
            raise ApiError(400, f'invalid resource version "{requested}"')
        with store.lock:
            initial: list[dict] = []
            if requested in ("", "0") or query.get("sendInitialEvents") == "true":
                listing = store.list_objects(
                    rt,
                    namespace,
                    label_selector=query.get("labelSelector"),
                    field_selector=field_selector,
                )
                initial = listing["items"]
                start = int(listing["metadata"]["resourceVersion"])
            else:
                start = int(requested)
        timeout = query.get("timeoutSeconds")
        deadline = time.monotonic() + (
            int(timeout) if timeout and timeout.isdigit() else DEFAULT_WATCH_SECONDS
        )
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        # The connection ends with the watch (below): said, so that a client's pool does not
        # send its next request down a connection the server is closing.
        self.send_header("Connection", "close")
        self.end_headers()
        bookmarks = query.get("allowWatchBookmarks") == "true"
        table_version = tables.table_version(self.headers.get("Accept") or "")
        headers_sent = False
        try:
            if requested not in ("", "0") and start < store.events.first_kept:
                self._chunk(watch.gone(start))
            else:
                for event in watch.stream(
                    store.events,
                    group=rt.group,
                    plural=rt.plural,
                    namespace=namespace,
                    name=name,
                    start=start,
                    initial=initial,
                    matches=matches,
                    current_version=lambda: store.resource_version,
                    deadline=deadline,
                    bookmarks=bookmarks,
                    api_version=rt.api_version,
                    kind=rt.kind,
                    stopping=self.sandbox.stopping,
                ):
                    if event["type"] != "BOOKMARK" and rt.custom:
                        event["object"]["apiVersion"] = rt.api_version
                    if event["type"] in watch.OBJECT_EVENTS:
                        event["object"] = served(store, rt, event["object"])
                    if table_version and event["type"] in watch.OBJECT_EVENTS:
                        # Each event a one-row Table; the columns with the first only, as
                        # kube-apiserver sends them.
                        printed = tables.table(
                            rt,
                            event["object"],
                            version=table_version,
                            include=query.get("includeObject") or "Metadata",
                        )
                        if headers_sent:
                            printed["columnDefinitions"] = []
                        headers_sent = True
                        self._chunk({**event, "object": printed})
                    else:
                        self._chunk(event)
                    if (
                        initial
                        and event["object"] is initial[-1]
                        and query.get("sendInitialEvents") == "true"
                        and bookmarks
                    ):
                        self._chunk(
                            {
                                "type": "BOOKMARK",
                                "object": {
                                    "kind": rt.kind,
                                    "apiVersion": rt.api_version,
                                    "metadata": {
                                        "resourceVersion": str(start),
                                        "annotations": {"k8s.io/initial-events-end": "true"},
                                    },
                                },
                            }
                        )
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionError, ssl.SSLEOFError):
            pass  # the client went away (over TLS, an EOF), as clients of a watch do
        self.close_connection = True
        return -1, {}

    def _chunk(self, event: dict) -> None:
        data = json.dumps(event).encode() + b"\n"
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()
