"""Fault and delay injection: the test hooks make chosen requests fail or wait, to rehearse
what Berth does when the cluster misbehaves."""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass


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
