"""The HTTP server under the stand-in (threads, keep-alive, TLS, prompt shutdown) and the
fault injection the test hooks drive."""

from __future__ import annotations

import contextlib
import selectors
import socket
import ssl
import sys
import threading
from dataclasses import asdict, dataclass
from http.server import ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

from .handler import Handler

if TYPE_CHECKING:
    from .server import KubeSandbox


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


class Faults:
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


class SandboxHTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], sandbox: KubeSandbox) -> None:
        self.sandbox = sandbox
        self.tls_context = sandbox.certificates.server_context() if sandbox.certificates else None
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        self._serving = True
        self._wakeup_read, self._wakeup_write = socket.socketpair()
        super().__init__(address, Handler)

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

    def get_request(self) -> tuple[socket.socket, Any]:
        connection, address = super().get_request()
        if self.tls_context is not None:
            # The handshake happens on the handler's thread, at its first read.
            connection = self.tls_context.wrap_socket(
                connection, server_side=True, do_handshake_on_connect=False
            )
        return connection, address

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError | ssl.SSLError):
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
