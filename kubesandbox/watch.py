"""Watch: the store's recent changes, kept in a bounded log, streamed as watch events.

Every committed write appends ``(resourceVersion, type, key, object)``. A watch from a
resourceVersion gets the events after it; one older than the log's start gets 410 Gone
(``too old resource version``), as from a real apiserver whose watch cache has moved on.
"""

from __future__ import annotations

import copy
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from .errors import status_body

HISTORY_SIZE = 10_000
BOOKMARK_SECONDS = 1.0
OBJECT_EVENTS = ("ADDED", "MODIFIED", "DELETED")  # the events that carry an object

Predicate = Callable[[dict], bool]


@dataclass
class Event:
    resource_version: int
    type: str  # ADDED | MODIFIED | DELETED
    key: tuple[str, str, str, str]  # (group, plural, namespace, name)
    obj: dict
    old: dict | None = None


class EventLog:
    def __init__(self, size: int = HISTORY_SIZE) -> None:
        self._events: deque[Event] = deque(maxlen=size)
        self._changed = threading.Condition()
        self.first_kept = 0  # the oldest resourceVersion a watch can start after

    def append(self, event: Event) -> None:
        with self._changed:
            if len(self._events) == self._events.maxlen:
                self.first_kept = self._events[0].resource_version
            self._events.append(event)
            self._changed.notify_all()

    def compact(self) -> None:
        """Forget the history, as etcd's compaction does: a watch from any version before
        now is 410 Gone (and has to list again); watches already running go on."""
        with self._changed:
            if self._events:
                self.first_kept = self._events[-1].resource_version
                self._events.clear()

    def restart_at(self, resource_version: int) -> None:
        """Forget the history and every version before this one (the store was restored):
        a watch from before it is 410 Gone, as after compaction."""
        with self._changed:
            self._events.clear()
            self.first_kept = resource_version

    def since(self, resource_version: int) -> list[Event]:
        with self._changed:
            return [e for e in self._events if e.resource_version > resource_version]

    def wait(self, timeout: float) -> None:
        with self._changed:
            self._changed.wait(timeout)

    def wake(self) -> None:
        with self._changed:
            self._changed.notify_all()


def gone(resource_version: int) -> dict:
    body = status_body(410, f"too old resource version: {resource_version}", "Expired")
    return {"type": "ERROR", "object": body}


def stream(
    log: EventLog,
    *,
    group: str,
    plural: str,
    namespace: str | None,
    name: str | None,
    start: int,
    initial: list[dict],
    matches: Predicate,
    current_version: Callable[[], int],
    deadline: float,
    bookmarks: bool,
    api_version: str,
    kind: str,
    stopping: threading.Event,
) -> Iterator[dict]:
    """Watch events for one resource type (and namespace, name), until ``deadline``."""
    for obj in initial:
        yield {"type": "ADDED", "object": obj}
    last_sent = start
    last_bookmark = time.monotonic()
    while not stopping.is_set():
        for event in log.since(last_sent):
            last_sent = event.resource_version
            g, p, ns, n = event.key
            if (g, p) != (group, plural) or (namespace and ns != namespace) or (name and n != name):
                continue
            now_matches = event.type != "DELETED" and matches(event.obj)
            was_matching = event.old is not None and matches(event.old)
            if event.type == "DELETED":
                if matches(event.obj):
                    yield {"type": "DELETED", "object": copy.deepcopy(event.obj)}
            elif now_matches and (event.type == "ADDED" or was_matching):
                yield {"type": event.type, "object": copy.deepcopy(event.obj)}
            elif now_matches:
                yield {"type": "ADDED", "object": copy.deepcopy(event.obj)}
            elif was_matching:  # it left the selection: to this watcher it is gone
                yield {"type": "DELETED", "object": copy.deepcopy(event.obj)}
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return
        if bookmarks and time.monotonic() - last_bookmark >= BOOKMARK_SECONDS:
            last_bookmark = time.monotonic()
            version = max(last_sent, current_version())
            yield {
                "type": "BOOKMARK",
                "object": {
                    "kind": kind,
                    "apiVersion": api_version,
                    "metadata": {"resourceVersion": str(version)},
                },
            }
        log.wait(min(remaining, BOOKMARK_SECONDS / 2))
