"""What the HTTP side (``httpserver``, ``handler``, ``discovery``, ``hooks``) needs of the
sandbox it serves.

A Protocol, so that the HTTP side names ``server.KubeSandbox`` without importing it (the
sandbox starts the HTTP server)."""

from __future__ import annotations

import threading
from typing import Protocol

from .authn import Authenticator
from .faults import Faults
from .openapi import Documents
from .operations import Operations
from .rbac import Authorizer
from .resources import Registry
from .store import Store
from .tls import Certificates


class Sandbox(Protocol):
    verbose: bool
    version_info: dict
    certificates: Certificates | None
    store: Store
    registry: Registry
    authenticator: Authenticator
    authorizer: Authorizer
    documents: Documents
    operations: Operations
    faults: Faults
    stopping: threading.Event  # set when the sandbox stops: wakes injected delays

    def record(
        self, method: str, path: str, query: str, status: int, *, injected: bool, user: str = ""
    ) -> None: ...

    # the test hooks under /_sandbox/
    def inject_faults(
        self,
        status: int | None = 500,
        times: int | None = 1,
        method: str | None = None,
        path_contains: str | None = None,
        delay: float = 0.0,
        message: str = ...,
    ) -> dict: ...

    def clear_faults(self) -> None: ...

    def requests(self) -> list[dict]: ...

    def requests_total(self) -> int: ...

    def clear_requests(self) -> None: ...

    def reset(self) -> None: ...
