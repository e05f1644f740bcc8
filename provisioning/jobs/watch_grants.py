"""When the access grants a watcher's cluster holds end: the watcher has the namespace's key
reconciled at that moment (the binding goes within a second of its time, not at beat's next
sweep), then plans the namespace again for the next one. Read off the desired state itself
(each grant's end is in its plan), so it costs no query of its own."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime

from django.db import DatabaseError
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from provisioning.kube import KubeError
from provisioning.plan import GrantSpec
from provisioning.reconcile import door
from provisioning.reconcile.keys import namespace_key
from provisioning.reconcile.queue import Cause
from tenants.conditions import Phase

logger = logging.getLogger(__name__)


class GrantEnds:
    def __init__(self) -> None:
        self.ends: dict[str, datetime] = {}  # namespace -> when its first grant ends

    def note(self, name: str, grants: tuple[GrantSpec, ...]) -> None:
        ends = [end for grant in grants if (end := parse_datetime(grant.expires_at))]
        if ends:
            self.ends[name] = min(ends)
        else:
            self.ends.pop(name, None)

    def forget(self, name: str) -> None:
        self.ends.pop(name, None)

    def end_due(self, *, cluster: str, worker: str, replan: Callable[[str], object]) -> None:
        now = timezone.now()
        for name in [name for name, end in self.ends.items() if end <= now]:
            key = namespace_key(cluster, name)
            try:
                result = door.run([key], cause=Cause("grant", detail="expired"), worker=worker)
                if result[key].outcome.phase is not Phase.BUSY:  # else tried next round
                    replan(name)
            except (DatabaseError, KubeError) as error:
                logger.warning("the end of a grant in %s is put off: %s", name, error)
                return
