"""The HTTP server under the stand-in: threads, keep-alive, TLS, prompt shutdown."""

from __future__ import annotations

import contextlib
import selectors
import socket
import ssl
import sys
import threading
from http.server import ThreadingHTTPServer
from typing import Any

from .handler import Handler
from .sandboxview import Sandbox


class SandboxHTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], sandbox: Sandbox) -> None:
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
