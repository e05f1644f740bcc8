"""Small HTTP servers the tests run on loopback, each on its own thread."""

from __future__ import annotations

import socketserver
import threading
from collections.abc import Iterator
from contextlib import contextmanager

# How often a serving thread looks for its stop: shutdown() waits up to this long, in every
# teardown (socketserver's default of half a second made each test that long).
POLL_SECONDS = 0.01


@contextmanager
def serving(server: socketserver.BaseServer) -> Iterator[socketserver.BaseServer]:
    """`server` answering on a thread of its own until the block ends; closed after."""
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": POLL_SECONDS}, daemon=True
    )
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
