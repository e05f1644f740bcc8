"""A Kubernetes API server stand-in, served over real HTTP for the official client.

No real kube-apiserver can run where Berth is developed and tested, so this module serves
the slice of the Kubernetes REST API that Berth talks to, faithfully enough that the
official ``kubernetes`` Python client (typed APIs, ``CustomObjectsApi`` and the
``DynamicClient``) works against it unchanged. It uses only the standard library and PyYAML
and never imports Django.

What it honours:

* Discovery: ``/version``, ``/api``, ``/api/v1``, ``/apis``, ``/apis/<group>`` and
  ``/apis/<group>/<version>`` for the types in ``resources.RESOURCE_TYPES`` (core, apps, RBAC,
  networking, admission policies, Argo CD, Kargo, Flux, cert-manager), plus ``/healthz``.
* CRUD with apiserver semantics: GET, LIST (also across all namespaces, label and field
  selectors, ``limit``/``continue``), POST (409 AlreadyExists), PUT (409 Conflict on a stale
  ``resourceVersion``), DELETE (a ``Status`` for built-in types, the object for custom
  resources), DELETE on a collection, PATCH as JSON merge patch, strategic merge patch
  (treated as a merge patch; 415 for custom resources, like the real server), JSON patch
  (RFC 6902) and server-side apply (``application/apply-patch+yaml`` with ``fieldManager``
  and ``force``): ``managedFields`` ownership, conflicts between managers, pruning of fields
  a manager stops applying, and no ``resourceVersion`` bump when nothing changed.
* ``metadata``: uid, creationTimestamp, a global monotonically increasing resourceVersion,
  generation (bumped when anything outside metadata/status changes), generateName, and a
  ``/status`` subresource on types that have one (their main endpoint ignores ``.status``).
* Namespaces: new ones are ``Active`` and labelled ``kubernetes.io/metadata.name``; deleting
  one makes it ``Terminating`` (creates in it get 403) until, after ``termination_seconds``,
  it disappears with everything in it. Creating in a missing namespace is a 404.
* Secrets: ``stringData`` is folded into base64 ``data``, ``type`` defaults to Opaque.
* Optional bearer-token auth (401 without it), ``dryRun``, and a JSON state file so a
  developer sandbox survives restarts.
* Test hooks under ``/_sandbox/`` (also on ``KubeSandbox`` in Python): fault and delay
  injection, a request log and a reset.

What it does not do: ``watch`` (answered with 400 BadRequest), admission (webhooks,
``ValidatingAdmissionPolicy`` objects are stored but never enforced), schema validation
(only names, labels and annotations are checked), controllers (nothing reconciles a
Deployment, an Argo Application or a Kargo Project; finalizers are stored but deletes are
immediate), strategic-merge list semantics, protobuf/CBOR, TLS, RBAC authorisation.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import selectors
import socket
import sys
import threading
import traceback
from collections import deque
from dataclasses import asdict, dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import yaml

from . import resources
from .errors import ApiError, status_body
from .resources import ResourceType
from .store import APPLY_PATCH, DEFAULT_NAMESPACES, PATCH_TYPES, Store

VERSION_INFO = {
    "major": "1",
    "minor": "33",
    "gitVersion": "v1.33.0+kubesandbox",
    "gitCommit": "0" * 40,
    "gitTreeState": "clean",
    "buildDate": "2025-04-23T00:00:00Z",
    "goVersion": "go1.24.2",
    "compiler": "gc",
    "platform": "linux/amd64",
}

REQUEST_LOG_SIZE = 10_000  # the developer sandbox runs for days; keep memory bounded
IDLE_CONNECTION_SECONDS = 120


@dataclass
class Fault:
    """Answer the next ``times`` matching requests with ``status`` after ``delay`` seconds.

    ``status=None`` only delays; ``times=None`` keeps matching until the faults are cleared.
    """

    status: int | None = 500
    times: int | None = 1
    method: str | None = None
    path_contains: str | None = None
    delay: float = 0.0
    message: str = "fault injected by kubesandbox"

    def __post_init__(self) -> None:
        if self.status is not None and not (
            isinstance(self.status, int) and 400 <= self.status <= 599
        ):
            raise ValueError(f"status must be an HTTP error code (400-599), not {self.status!r}")
        if self.times is not None and (not isinstance(self.times, int) or self.times < 1):
            raise ValueError(f"times must be a positive integer or null, not {self.times!r}")
        if not isinstance(self.delay, int | float) or self.delay < 0:
            raise ValueError(f"delay must be a non-negative number, not {self.delay!r}")
        if self.method:
            self.method = self.method.upper()

    def matches(self, method: str, path: str) -> bool:
        return (self.method is None or self.method == method) and (
            self.path_contains is None or self.path_contains in path
        )


class _Faults:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: list[Fault] = []

    def add(self, fault: Fault) -> None:
        with self._lock:
            self._pending.append(fault)

    def take(self, method: str, path: str) -> Fault | None:
        """The first pending fault matching this request, using up one of its ``times``."""
        with self._lock:
            for fault in self._pending:
                if fault.matches(method, path):
                    if fault.times is not None:
                        fault.times -= 1
                        if fault.times == 0:
                            self._pending.remove(fault)
                    return fault
        return None

    def pending(self) -> list[dict]:
        with self._lock:
            return [asdict(fault) for fault in self._pending]

    def clear(self) -> None:
        with self._lock:
            self._pending.clear()


@dataclass
class _Route:
    rt: ResourceType
    namespace: str | None
    name: str | None
    subresource: str


def _not_found_path() -> ApiError:
    return ApiError(404, "the server could not find the requested resource", details={})


def _method_not_allowed() -> ApiError:
    return ApiError(
        405, "the server does not allow this method on the requested resource", details={}
    )


def _resource_list(group: str, version: str) -> dict:
    rts = list(resources.types_in(group, version))
    if not rts:
        raise _not_found_path()
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": rts[0].api_version,
        "resources": [entry for rt in rts for entry in rt.discovery_entries()],
    }


def _api_group(name: str, versions: list[str]) -> dict:
    listed = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
    return {
        "kind": "APIGroup",
        "apiVersion": "v1",
        "name": name,
        "versions": listed,
        "preferredVersion": listed[0],
    }


def _route(segments: list[str]) -> _Route | dict:
    """Map a path to a resource route, or answer it directly when it is discovery."""
    if segments[:2] == ["api", "v1"]:
        group, version, rest = "", "v1", segments[2:]
    elif segments[:1] == ["apis"] and len(segments) >= 3:
        group, version, rest = segments[1], segments[2], segments[3:]
    else:
        raise _not_found_path()
    if not rest:
        return _resource_list(group, version)
    namespace = None
    scoped = resources.find_type(group, version, rest[2]) if len(rest) >= 3 else None
    if rest[0] == "namespaces" and scoped is not None and scoped.namespaced:
        namespace, rest = rest[1], rest[2:]
    rt = resources.find_type(group, version, rest[0])
    tail = rest[1:]
    if rt is None or len(tail) > 2 or (rt.namespaced and namespace is None and tail):
        raise _not_found_path()
    subresource = tail[1] if len(tail) == 2 else ""
    if subresource and not (subresource == "status" and rt.has_status):
        raise _not_found_path()
    return _Route(rt, namespace, tail[0] if tail else None, subresource)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as urllib3 pools connections
    # Headers and body go out in separate writes; with Nagle on, each response would
    # wait ~40 ms for the client's delayed ACK.
    disable_nagle_algorithm = True
    timeout = IDLE_CONNECTION_SECONDS
    server: _Server

    def do_GET(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    def do_PUT(self) -> None:
        self._handle()

    def do_PATCH(self) -> None:
        self._handle()

    def do_DELETE(self) -> None:
        self._handle()

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.sandbox.verbose:
            sys.stderr.write(f"kubesandbox: {format % args}\n")

    # -- plumbing ------------------------------------------------------------------------

    def _handle(self) -> None:
        sandbox = self.server.sandbox
        url = urlsplit(self.path)
        path = url.path.rstrip("/") or "/"
        query = {key: values[-1] for key, values in parse_qs(url.query).items()}
        length = self.headers.get("Content-Length") or "0"
        body = self.rfile.read(int(length) if length.isdigit() else 0)
        if sandbox.token and self.headers.get("Authorization") != f"Bearer {sandbox.token}":
            sandbox.record(self.command, path, url.query, 401, injected=False)
            self._send(401, status_body(401, "Unauthorized"))
            return
        if path.startswith("/_sandbox"):
            self._send(*self._control(path, body))
            return
        fault = sandbox.faults.take(self.command, path)
        if fault and fault.delay:
            sandbox.stopping.wait(fault.delay)
        if fault and fault.status:
            code, payload = fault.status, status_body(fault.status, fault.message)
        else:
            fault = None
            try:
                code, payload = self._dispatch(path, query, body)
            except ApiError as error:
                code, payload = error.code, error.status()
            except Exception as error:  # a bug in the sandbox must still answer like a server
                traceback.print_exc()
                code, payload = 500, status_body(500, f"kubesandbox internal error: {error!r}")
        sandbox.record(self.command, path, url.query, code, injected=fault is not None)
        self._send(code, payload)

    def _send(self, code: int, payload: dict | str) -> None:
        if isinstance(payload, str):
            data, content_type = payload.encode(), "text/plain; charset=utf-8"
        else:
            data, content_type = json.dumps(payload).encode(), "application/json"
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _parse(self, body: bytes, *, allow_empty: bool = False) -> Any:
        if not body.strip():
            if allow_empty:
                return None
            raise ApiError(400, "the request body is empty")
        content_type = self.headers.get("Content-Type", "")
        try:
            if "yaml" in content_type:
                return yaml.safe_load(body)
            return json.loads(body)
        except (ValueError, yaml.YAMLError) as error:
            raise ApiError(400, f"the request body could not be decoded: {error}") from error

    def _default_manager(self) -> str:
        # The real server names an unnamed writer after its User-Agent's product.
        return (self.headers.get("User-Agent") or "unknown").split("/")[0]

    # -- the Kubernetes API --------------------------------------------------------------

    def _dispatch(self, path: str, query: dict[str, str], body: bytes) -> tuple[int, dict | str]:
        # Split before unquoting: a %2F inside a name must not make a new segment.
        segments = [unquote(segment) for segment in path.strip("/").split("/")]
        if path in ("/healthz", "/livez", "/readyz"):
            return 200, "ok"
        if self.command == "GET" and path == "/version":
            return 200, VERSION_INFO
        if self.command == "GET" and path == "/api":
            address = "{}:{}".format(*self.server.server_address[:2])
            return 200, {
                "kind": "APIVersions",
                "versions": ["v1"],
                "serverAddressByClientCIDRs": [
                    {"clientCIDR": "0.0.0.0/0", "serverAddress": address}
                ],
            }
        if self.command == "GET" and path == "/apis":
            groups = [_api_group(g, v) for g, v in resources.group_versions().items()]
            return 200, {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}
        if self.command == "GET" and len(segments) == 2 and segments[0] == "apis":
            versions = resources.group_versions().get(segments[1])
            if not versions:
                raise _not_found_path()
            return 200, _api_group(segments[1], versions)
        route = _route(segments)
        if isinstance(route, dict):
            if self.command != "GET":
                raise _method_not_allowed()
            return 200, route
        if query.get("watch") in ("true", "1"):
            raise ApiError(400, "watch is not supported by the kubesandbox Kubernetes stand-in")
        return self._resource(route, query, body)

    def _resource(self, route: _Route, query: dict[str, str], body: bytes) -> tuple[int, dict]:
        store = self.server.sandbox.store
        rt, namespace, name, sub = route.rt, route.namespace, route.name, route.subresource
        dry_run = bool(query.get("dryRun"))
        manager = query.get("fieldManager")
        writer = manager or self._default_manager()
        cluster_wide = rt.namespaced and namespace is None
        verb = {
            ("GET", True): "get",
            ("GET", False): "list",
            ("POST", False): "create",
            ("PUT", True): "update",
            ("PATCH", True): "patch",
            ("DELETE", True): "delete",
            ("DELETE", False): "deletecollection",
        }.get((self.command, name is not None))
        allowed = resources.STATUS_VERBS if sub else rt.verbs
        if verb not in allowed or (cluster_wide and verb != "list"):
            raise _method_not_allowed()
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
        if verb == "create":
            created = store.create(
                rt,
                namespace,
                self._parse(body),
                manager=writer,
                dry_run=dry_run,
            )
            return 201, created
        if verb == "update":
            return 200, store.replace(
                rt,
                namespace,
                name or "",
                self._parse(body),
                manager=writer,
                subresource=sub,
                dry_run=dry_run,
            )
        if verb == "patch":
            patch_type = self.headers.get("Content-Type", "").split(";")[0].strip()
            if patch_type not in PATCH_TYPES:
                raise ApiError(
                    415,
                    f"the body of the request was in an unknown format - accepted media "
                    f"types include: {', '.join(PATCH_TYPES)}",
                )
            obj, created = store.patch(
                rt,
                namespace,
                name or "",
                patch_type,
                self._parse(body),
                # Apply needs an explicit fieldManager; other writes default to the client's name.
                manager=manager if patch_type == APPLY_PATCH else writer,
                force=query.get("force") == "true",
                subresource=sub,
                dry_run=dry_run,
            )
            return (201 if created else 200), obj
        options = self._parse(body, allow_empty=True) or {}
        if verb == "delete":
            return 200, store.delete(
                rt,
                namespace,
                name or "",
                preconditions=options.get("preconditions"),
                dry_run=dry_run or bool(options.get("dryRun")),
            )
        return 200, store.delete_collection(
            rt,
            namespace,
            label_selector=query.get("labelSelector"),
            field_selector=query.get("fieldSelector"),
            dry_run=dry_run,
        )

    # -- test hooks ----------------------------------------------------------------------

    def _control(self, path: str, body: bytes) -> tuple[int, dict]:
        sandbox = self.server.sandbox
        action = (self.command, path.removeprefix("/_sandbox"))
        if action == ("GET", "/faults"):
            return 200, {"items": sandbox.faults.pending()}
        if action == ("POST", "/faults"):
            spec = self._parse(body, allow_empty=True) or {}
            try:
                fault = sandbox.inject_faults(**spec)
            except (TypeError, ValueError) as error:
                return 400, status_body(400, f"invalid fault: {error}")
            return 201, fault
        if action == ("DELETE", "/faults"):
            sandbox.clear_faults()
            return 200, {"items": []}
        if action == ("GET", "/requests"):
            return 200, {"items": sandbox.requests()}
        if action == ("DELETE", "/requests"):
            sandbox.clear_requests()
            return 200, {"items": []}
        if action == ("POST", "/reset"):
            sandbox.reset()
            return 200, status_body(200, "sandbox reset")
        return 404, status_body(404, f"no sandbox hook {self.command} {path}")


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], sandbox: KubeSandbox) -> None:
        self.sandbox = sandbox
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        self._serving = True
        self._wakeup_read, self._wakeup_write = socket.socketpair()
        super().__init__(address, _Handler)

    def serve(self) -> None:
        """Like ``serve_forever``, but ``stop_serving`` wakes it at once instead of it polling
        (a 50 ms poll made every test's teardown 50 ms slower)."""
        with selectors.DefaultSelector() as selector:
            selector.register(self, selectors.EVENT_READ)
            selector.register(self._wakeup_read, selectors.EVENT_READ)
            while self._serving:
                for key, _ in selector.select():
                    if key.fileobj is self and self._serving:
                        self._handle_request_noblock()

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return  # the client hung up, e.g. it timed out during an injected delay
        super().handle_error(request, client_address)

    def stop_serving(self) -> None:
        self._serving = False
        self._wakeup_write.send(b"!")

    def server_close(self) -> None:
        super().server_close()
        self._wakeup_read.close()
        self._wakeup_write.close()

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._connections_lock:
            self._connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._connections_lock:
            self._connections.discard(request)
        super().shutdown_request(request)

    def close_connections(self) -> None:
        """Hang up kept-alive connections so no handler thread outlives the server."""
        with self._connections_lock:
            connections = list(self._connections)
        for connection in connections:
            with contextlib.suppress(OSError):  # already closed by the client
                connection.shutdown(socket.SHUT_RDWR)


class KubeSandbox:
    """A Kubernetes API stand-in on a background thread; usable as a context manager::

    with KubeSandbox() as sandbox:
        configuration = kubernetes.client.Configuration(host=sandbox.url)
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        token: str | None = None,
        state_file: str | os.PathLike[str] | None = None,
        termination_seconds: float = 0.0,
        namespaces: tuple[str, ...] = DEFAULT_NAMESPACES,
        verbose: bool = False,
    ) -> None:
        self.host = host
        self.port = port
        self.token = token
        self.verbose = verbose
        self.store = Store(
            termination_seconds=termination_seconds, state_file=state_file, namespaces=namespaces
        )
        self.faults = _Faults()
        self.stopping = threading.Event()  # wakes handlers sleeping in an injected delay
        self._requests: deque[dict] = deque(maxlen=REQUEST_LOG_SIZE)
        self._requests_lock = threading.Lock()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------------

    def start(self) -> KubeSandbox:
        """Bind (port 0 picks a free port) and serve on a daemon thread."""
        if self._server is not None:
            raise RuntimeError("the sandbox is already running")
        self.stopping.clear()
        self._server = _Server((self.host, self.port), self)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(
            target=self._server.serve, name=f"kubesandbox:{self.port}", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, hang up open connections and release the port."""
        if self._server is None:
            return
        self.stopping.set()
        self._server.stop_serving()
        if self._thread is not None:
            self._thread.join()
        self._server.close_connections()
        self._server.server_close()
        self._server = self._thread = None

    def __enter__(self) -> KubeSandbox:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("the sandbox is not running; call start() first")
        return f"http://{self.host}:{self.port}"

    def kubeconfig(self, context: str = "kubesandbox") -> dict:
        """A kubeconfig (as a dict) pointing at this sandbox, e.g. for ``kubectl`` or Celery."""
        user: dict = {"token": self.token} if self.token else {}
        return {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": context, "cluster": {"server": self.url}}],
            "users": [{"name": context, "user": user}],
            "contexts": [{"name": context, "context": {"cluster": context, "user": context}}],
            "current-context": context,
        }

    # -- inspection ----------------------------------------------------------------------

    def objects(
        self,
        kind: str | None = None,
        namespace: str | None = None,
        *,
        api_version: str | None = None,
    ) -> list[dict]:
        """Stored objects, optionally of one kind (``"ConfigMap"`` or ``"configmaps"``)."""
        rt = resources.lookup(kind, api_version) if kind else None
        return self.store.objects(rt, namespace)

    def get(
        self,
        kind: str,
        name: str,
        namespace: str | None = None,
        *,
        api_version: str | None = None,
    ) -> dict | None:
        """One stored object, or None."""
        rt = resources.lookup(kind, api_version)
        try:
            return self.store.get(rt, namespace if rt.namespaced else None, name)
        except ApiError:
            return None

    def upsert(self, obj: dict) -> dict:
        """Create or replace an object directly, status included, bypassing faults and auth."""
        return self.store.upsert(copy.deepcopy(obj))

    def requests(self) -> list[dict]:
        """The request log: ``{"method", "path", "query", "status", "injected"}`` dicts."""
        with self._requests_lock:
            return list(self._requests)

    def clear_requests(self) -> None:
        with self._requests_lock:
            self._requests.clear()

    def record(self, method: str, path: str, query: str, status: int, *, injected: bool) -> None:
        entry = {
            "method": method,
            "path": path,
            "query": query,
            "status": status,
            "injected": injected,
        }
        with self._requests_lock:
            self._requests.append(entry)

    # -- fault injection -----------------------------------------------------------------

    def inject_faults(
        self,
        status: int | None = 500,
        times: int | None = 1,
        method: str | None = None,
        path_contains: str | None = None,
        delay: float = 0.0,
        message: str = Fault.message,
    ) -> dict:
        """Make the next ``times`` requests matching ``method``/``path_contains`` fail."""
        fault = Fault(status, times, method, path_contains, delay, message)
        self.faults.add(fault)
        return asdict(fault)

    def inject_delay(
        self,
        seconds: float,
        times: int | None = 1,
        method: str | None = None,
        path_contains: str | None = None,
    ) -> dict:
        """Make the next matching requests answer normally, but only after ``seconds``."""
        return self.inject_faults(None, times, method, path_contains, seconds)

    def clear_faults(self) -> None:
        self.faults.clear()

    def reset(self) -> None:
        """Back to a fresh cluster: seed namespaces only, no faults, empty request log."""
        self.clear_faults()
        self.clear_requests()
        self.store.reset()
