"""The processes `make run` starts: waiting for them to answer, naming them for people, and
stopping them all, gently first (portal.run)."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from typing import Any


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for_port(port: int, child: subprocess.Popen, timeout: float = 30) -> bool:
    """Whether something listens on the loopback port before `child` exits or time is up."""
    deadline = time.monotonic() + timeout
    while child.poll() is None and time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return True
        time.sleep(0.1)
    return False


def wait_for_health(urls: list[str], children: dict[str, subprocess.Popen]) -> bool:
    """Whether every one of `urls` answers 200 before any child exits: the web server and
    the identity provider serve requests, so the URL printed next works at once, sign-in
    included."""
    waiting = list(urls)
    while waiting and all(child.poll() is None for child in children.values()):
        try:
            with urllib.request.urlopen(waiting[0], timeout=2) as answer:  # noqa: S310 - our own http://
                if answer.status == 200:
                    waiting.pop(0)
                    continue
        except (OSError, ValueError):
            pass
        time.sleep(0.2)
    return not waiting


# What each child is, for people, in the order they are named: "Stopped the web server, …".
CHILD_NAMES = {
    "web": "the web server",
    "worker": "the Celery worker",
    "beat": "Celery beat",
    "watcher": "the drift watcher",
    "sandbox": "the sandbox cluster",
    "git": "the demo git server",
    "forge": "the forge stand-in",
    "idp": "the development identity provider",
}


def described(children: dict[str, subprocess.Popen]) -> str:
    order = list(CHILD_NAMES)
    names = [
        CHILD_NAMES.get(name, name)
        for name in sorted(
            children, key=lambda name: order.index(name) if name in order else len(order)
        )
    ]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


# Berth's own processes, stopped before what they talk to: a worker or watcher whose cluster
# went first would fill the terminal with connection errors on its way out.
BERTH_PROCESSES = ("web", "worker", "beat", "watcher")


def stop(children: dict[str, subprocess.Popen], grace: float = 10) -> None:
    """Stop every child, gently first (Celery then stops its own pool), Berth's processes
    before the stand-ins, and say which. Each runs in a session of its own, so a Ctrl-C in
    the terminal reaches none of them: what is still running after `grace` seconds, or at a
    second Ctrl-C, is killed."""
    deadline = time.monotonic() + grace
    first = [child for name, child in children.items() if name in BERTH_PROCESSES]
    rest = [child for name, child in children.items() if name not in BERTH_PROCESSES]
    try:
        for group in (first, rest):
            for child in group:
                if child.poll() is None:
                    child.terminate()
            for child in group:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    child.wait(timeout=max(0.1, deadline - time.monotonic()))
    except KeyboardInterrupt:
        print("Ctrl-C again: killing what is still running.", flush=True)
    for child in children.values():
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
    print(f"Stopped {described(children)}.", flush=True)


class Interrupts:
    """Ctrl-C and SIGTERM as KeyboardInterrupt, except while a child is being started and
    recorded (`held`): then just after it, so that no child runs without being recorded
    among those `stop` stops."""

    def __init__(self) -> None:
        self.holding = False
        self.pending = False

    def install(self) -> None:
        # Installed explicitly: a shell that starts us in the background ignores SIGINT.
        signal.signal(signal.SIGINT, self._interrupted)
        signal.signal(signal.SIGTERM, self._interrupted)

    def _interrupted(self, *_: object) -> None:
        if self.holding:
            self.pending = True
        else:
            raise KeyboardInterrupt

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        self.holding = True
        try:
            yield
        finally:
            self.holding = False
            if self.pending:
                self.pending = False
                raise KeyboardInterrupt


INTERRUPTS = Interrupts()


def start_child(
    children: dict[str, subprocess.Popen], name: str, argv: list[str], **options: Any
) -> subprocess.Popen:
    """`argv` started in a session of its own and recorded in `children` as `name`, with no
    Ctrl-C in between."""
    with INTERRUPTS.held():
        child = subprocess.Popen(argv, start_new_session=True, **options)  # noqa: S603 - our own programs, fixed argv
        children[name] = child
    return child
