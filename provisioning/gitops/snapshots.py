"""A branch read again only when it moved: a periodic reader (the truth table, every few
minutes for every tenant) asks the remote which commit the branch is at, one ref by
`git ls-remote`, and fetches only when that is not the commit it read last time."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable

from provisioning.gitops.remote import Policy, Remote
from provisioning.gitops.write import probe, read_snapshot

# What each (repository, branch, directories) held at the commit last read, in this
# process; the least recently read go first past this many.
KEPT = 512
_read: OrderedDict[tuple[str, str, tuple[str, ...]], tuple[str, dict[str, str]]] = OrderedDict()
_lock = threading.Lock()


def read_snapshot_if_moved(
    remote: Remote, within: Iterable[str], *, policy: Policy | None = None
) -> tuple[str, dict[str, str]]:
    """As `read_snapshot`: the commit the branch points at and what it holds under these
    directories; fetched only when the branch moved since this process last read it."""
    key = (remote.url, remote.branch, tuple(sorted(within)))
    head = probe(remote, policy=policy)
    with _lock:
        kept = _read.get(key)
        if kept is not None and kept[0] == head:
            _read.move_to_end(key)
            return head, dict(kept[1])
    head, files = read_snapshot(remote, key[2], policy=policy)
    with _lock:
        _read[key] = (head, files)
        _read.move_to_end(key)
        while len(_read) > KEPT:
            _read.popitem(last=False)
    return head, dict(files)
