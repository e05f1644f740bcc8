"""``KubeSandbox``: the stand-in assembled (store, authentication, RBAC, admission, the HTTP
server) on a background thread, with the test hooks that inject faults, log requests and
reset the cluster. What the stand-in honours and what it does not: the package docstring."""

from __future__ import annotations

import base64
import copy
import os
import secrets
import threading
from collections import deque
from dataclasses import asdict
from pathlib import Path
from typing import Any

from . import crds as crd_support
from . import rbac
from .admission import PolicyAdmission
from .authn import ADMIN, ANONYMOUS, Authenticator, OidcOptions, UserInfo, parse_token_file
from .errors import ApiError
from .faults import Fault, Faults
from .httpserver import SandboxHTTPServer
from .openapi import Documents
from .operations import Operations
from .resources import RBAC, ResourceType
from .store import DEFAULT_NAMESPACES, Store, WriteContext
from .tls import make_certificates

VERSION_INFO = {
    "major": "1",
    "minor": "32",
    "gitVersion": "v1.32.0+kubesandbox",
    "gitCommit": "0" * 40,
    "gitTreeState": "clean",
    "buildDate": "2024-12-11T00:00:00Z",
    "goVersion": "go1.23.4",
    "compiler": "gc",
    "platform": "linux/amd64",
}

REQUEST_LOG_SIZE = 10_000  # the developer sandbox runs for days; keep memory bounded
# KubeSandbox(anonymous_user=...) value: requests without credentials act as the admin.
ANONYMOUS_IS_ADMIN = "admin"
_UNSET: Any = object()


class KubeSandbox:
    """A Kubernetes API stand-in on a background thread; usable as a context manager::

        with KubeSandbox(crds=["../shared/crds/argocd"]) as sandbox:
            configuration = kubernetes.client.Configuration(host=sandbox.url)
            configuration.api_key = {"authorization": "Bearer " + sandbox.token}

    ``token`` is the admin's bearer token (user ``kubesandbox-admin`` in
    ``system:masters``); one is generated when none is given. ``token_file`` adds static
    tokens in kube-apiserver's ``--token-auth-file`` format. ``anonymous_user`` says who a
    request without credentials is: ``None`` for ``system:anonymous`` (as a real server),
    ``"admin"`` (``ANONYMOUS_IS_ADMIN``) for the admin, or any user name (then in
    ``system:authenticated``) or a ``UserInfo``. Left out, it is the admin only when neither
    ``token`` nor ``token_file`` is given: the old behaviour tests rely on, never what
    ``python -m kubesandbox`` does. ``crds`` and ``manifests`` are YAML files (or
    directories of them) applied as the admin at start and at every ``reset()``. ``tls``
    serves HTTPS with a certificate made at start (kubectl sends credentials over HTTPS
    only); ``kubeconfig()`` then carries its CA. ``oidc`` accepts ID tokens of an OpenID
    Connect provider as kube-apiserver's ``--oidc-*`` flags do (``authn.OidcOptions``).
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        token: str | None = None,
        token_file: str | os.PathLike[str] | None = None,
        anonymous_user: str | UserInfo | None = _UNSET,
        state_file: str | os.PathLike[str] | None = None,
        termination_seconds: float = 0.0,
        namespaces: tuple[str, ...] = DEFAULT_NAMESPACES,
        crds: list[str | os.PathLike[str]] | tuple = (),
        manifests: list[str | os.PathLike[str]] | tuple = (),
        tls: bool = False,
        verbose: bool = False,
        oidc: OidcOptions | None = None,
    ) -> None:
        self.host = host
        self.certificates = make_certificates(host) if tls else None
        self.port = port
        self.verbose = verbose
        self.version_info = dict(VERSION_INFO)
        if anonymous_user is _UNSET:
            anonymous_user = ANONYMOUS_IS_ADMIN if token is None and token_file is None else None
        self.token = token or secrets.token_urlsafe(24)
        self.anonymous_user = anonymous_user
        self._manifests = [*crds, *manifests]
        static = parse_token_file(Path(token_file).read_text()) if token_file else {}
        self.authenticator = Authenticator(
            admin_token=self.token,
            static_tokens=static,
            anonymous=_anonymous(anonymous_user),
            service_account_uid=self._service_account_uid,
            oidc=oidc,
        )
        self.store = Store(
            termination_seconds=termination_seconds,
            state_file=state_file,
            namespaces=namespaces,
            seed=self._seed,
            seed_key=("bootstrap", crd_support.manifests_key(self._manifests)),
            controllers=(crd_support.crd_controller, rbac.aggregation_controller),
        )
        self.registry = self.store.registry
        self.authorizer = rbac.Authorizer(self.store)
        self.policies = PolicyAdmission(self.store, self.authorizer)
        self.store.admission = self._admit
        self.documents = Documents(self.registry)
        self.operations = Operations(
            self.store, authorizer=self.authorizer, authenticator=self.authenticator
        )
        self.faults = Faults()
        self.stopping = threading.Event()  # wakes handlers sleeping in an injected delay
        self._requests: deque[dict] = deque(maxlen=REQUEST_LOG_SIZE)
        # Every request answered since the start, however many the log has let go of: what
        # a client counts calls by at a size the log cannot hold.
        self._requests_total = 0
        self._requests_lock = threading.Lock()
        self._server: SandboxHTTPServer | None = None
        self._thread: threading.Thread | None = None
        if state_file:
            # A restored state may predate the bootstrap roles or the CRDs asked for now.
            for obj in rbac.bootstrap_objects():
                if self.get(obj["kind"], obj["metadata"]["name"]) is None:
                    self.store.upsert(obj)
            if self._manifests:
                self.apply_manifests(self._manifests)

    # -- what every cluster has, and what the sandbox was told to install ----------------

    def _seed(self, store: Store) -> None:
        for obj in rbac.bootstrap_objects():
            store.upsert(obj)
        if getattr(self, "_manifests", None):
            self.apply_manifests(self._manifests, store)

    def apply_manifests(
        self, paths: list[str | os.PathLike[str]] | tuple, store: Store | None = None
    ) -> list[dict]:
        """Create or replace every object in these YAML files, as the admin."""
        store = store or self.store
        return [store.upsert(obj) for obj in crd_support.load_manifests(list(paths))]

    def install_crds(self, *paths: str | os.PathLike[str]) -> list[dict]:
        """Install CRDs (files or directories of YAML) now; they are served at once."""
        return self.apply_manifests(paths)

    def _service_account_uid(self, namespace: str, name: str) -> str | None:
        account = self.get("ServiceAccount", name, namespace)
        return account["metadata"]["uid"] if account else None

    def _admit(
        self,
        operation: str,
        rt: ResourceType,
        new: dict | None,
        old: dict | None,
        ctx: WriteContext,
    ) -> None:
        user = ctx.user
        if user is None:
            return  # the Python API (seeding, upsert) is the cluster's operator
        if rt.group == RBAC and new is not None and not user.is_admin:
            if rt.kind in ("Role", "ClusterRole"):
                self.authorizer.check_role_write(user, rt, new)
            else:
                self.authorizer.check_binding_write(user, rt, new)
        ctx.warnings += self.policies.admit(
            operation, rt, ctx.subresource, new, old, user, ctx.dry_run
        )

    # -- lifecycle -----------------------------------------------------------------------

    def start(self) -> KubeSandbox:
        """Bind (port 0 picks a free port) and serve on a daemon thread."""
        if self._server is not None:
            raise RuntimeError("the sandbox is already running")
        self.stopping.clear()
        self._server = SandboxHTTPServer((self.host, self.port), self)
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
        self.store.events.wake()
        self._server.stop_serving()
        if self._thread is not None:
            self._thread.join()
        self._server.close_connections()
        self._server.server_close()
        self._server = self._thread = None

    @property
    def serving(self) -> bool:
        return self._server is not None

    def __enter__(self) -> KubeSandbox:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("the sandbox is not running; call start() first")
        scheme = "https" if self.certificates else "http"
        return f"{scheme}://{self.host}:{self.port}"

    def kubeconfig(self, context: str = "kubesandbox", *, token: str | None = None) -> dict:
        """A kubeconfig (as a dict) pointing at this sandbox with the admin's token (or
        ``token``), e.g. for ``kubectl`` or Celery."""
        return {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": context, "cluster": self._cluster_entry()}],
            "users": [{"name": context, "user": {"token": token or self.token}}],
            "contexts": [{"name": context, "context": {"cluster": context, "user": context}}],
            "current-context": context,
        }

    def _cluster_entry(self) -> dict:
        entry = {"server": self.url}
        if self.certificates:
            entry["certificate-authority-data"] = base64.b64encode(
                self.certificates.ca_pem
            ).decode()
        return entry

    @property
    def ca_certificate(self) -> bytes | None:
        """The PEM of the CA that signed the serving certificate (``tls=True`` only)."""
        return self.certificates.ca_pem if self.certificates else None

    def service_account_token(
        self, namespace: str, name: str, *, expiration_seconds: int = 3600
    ) -> str:
        """A token for a ServiceAccount (it must exist), as the TokenRequest API mints."""
        account = self.get("ServiceAccount", name, namespace)
        if account is None:
            raise KeyError(f"no ServiceAccount {namespace}/{name}")
        token, _ = self.authenticator.mint(
            namespace, name, account["metadata"]["uid"], expiration_seconds=expiration_seconds
        )
        return token

    def add_token(
        self, token: str, user: str, *, uid: str = "", groups: tuple[str, ...] = ()
    ) -> None:
        """Accept ``token`` as ``user`` (a static token, like --token-auth-file's lines)."""
        self.authenticator.static_tokens[token] = UserInfo(
            user, uid, (*groups, "system:authenticated")
        )

    # -- inspection ----------------------------------------------------------------------

    def objects(
        self,
        kind: str | None = None,
        namespace: str | None = None,
        *,
        api_version: str | None = None,
    ) -> list[dict]:
        """Stored objects, optionally of one kind (``"ConfigMap"`` or ``"configmaps"``)."""
        rt = self.registry.lookup(kind, api_version) if kind else None
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
        rt = self.registry.lookup(kind, api_version)
        try:
            return self.store.get(rt, namespace if rt.namespaced else None, name)
        except ApiError:
            return None

    def upsert(self, obj: dict) -> dict:
        """Create or replace an object directly, status included, bypassing faults, auth and
        admission (but not validation)."""
        return self.store.upsert(copy.deepcopy(obj))

    def requests(self) -> list[dict]:
        """The request log: ``{"method", "path", "query", "status", "injected", "user"}``."""
        with self._requests_lock:
            return list(self._requests)

    def requests_total(self) -> int:
        with self._requests_lock:
            return self._requests_total

    def clear_requests(self) -> None:
        with self._requests_lock:
            self._requests.clear()

    def record(
        self, method: str, path: str, query: str, status: int, *, injected: bool, user: str = ""
    ) -> None:
        entry = {
            "method": method,
            "path": path,
            "query": query,
            "status": status,
            "injected": injected,
            "user": user,
        }
        with self._requests_lock:
            self._requests.append(entry)
            self._requests_total += 1

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
        """Back to a fresh cluster: seed namespaces, bootstrap RBAC and the sandbox's CRDs and
        manifests; no faults, empty request log."""
        self.clear_faults()
        self.clear_requests()
        self.store.reset()

    def snapshot(self) -> bytes:
        """The cluster's objects now, to `restore` later."""
        return self.store.snapshot()

    def restore(self, snapshot: bytes) -> None:
        """Back to the objects of a `snapshot`; no faults, empty request log. Watches from
        before it are 410 Gone, as after an etcd restore."""
        self.clear_faults()
        self.clear_requests()
        self.store.restore(snapshot)


def _anonymous(anonymous_user: str | UserInfo | None) -> UserInfo:
    if anonymous_user is None:
        return ANONYMOUS
    if anonymous_user == ANONYMOUS_IS_ADMIN:
        return ADMIN
    if isinstance(anonymous_user, UserInfo):
        return anonymous_user
    return UserInfo(str(anonymous_user), groups=("system:authenticated",))
