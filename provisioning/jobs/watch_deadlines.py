"""The moments a watcher's namespaces change by the clock: an access grant's end, a sleep
schedule's next sleep or wake, a wake on demand's end. At each, the watcher has the
namespace's key reconciled (the binding goes, the workloads sleep or wake, within a second
of their time rather than at beat's next sweep), then plans the namespace again for the
next. Grants' ends and the schedule are read off the desired state itself (its plan holds
them); wakes on demand, which change no plan, are looked up at each refresh."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime

from django.db import DatabaseError
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from provisioning.kube import KubeError
from provisioning.plan import NamespaceSpec
from provisioning.reconcile import door
from provisioning.reconcile.keys import namespace_key
from provisioning.reconcile.queue import Cause
from tenants.conditions import Phase
from tenants.models import Namespace

logger = logging.getLogger(__name__)


class Deadlines:
    def __init__(self) -> None:
        # namespace -> (when its next moment comes, what it is: "grant" or "sleep")
        self.due: dict[str, tuple[datetime, str]] = {}
        self.wakes_seen_until: datetime | None = None

    def note(self, ns: NamespaceSpec) -> None:
        moments = [
            (end, "grant") for grant in ns.grants if (end := parse_datetime(grant.expires_at))
        ]
        if ns.sleep is not None and (change := parse_datetime(ns.sleep.next_change)):
            moments.append((change, "sleep"))
        if moments:
            self.due[ns.name] = min(moments)
        else:
            self.due.pop(ns.name, None)

    def note_wakes(self, cluster_id: int) -> None:
        """Wakes on demand on the cluster: each one's end is a moment too (one that ended
        since the last look included: due at once)."""
        now = timezone.now()
        wakes = Namespace.objects.filter(
            cluster_id=cluster_id, awake_until__gt=self.wakes_seen_until or now
        ).values_list("name", "awake_until")
        for name, until in list(wakes):
            noted = self.due.get(name)
            if noted is None or until < noted[0]:
                self.due[name] = (until, "sleep")
        self.wakes_seen_until = now  # only once read: a locked table is read again next time

    def forget(self, name: str) -> None:
        self.due.pop(name, None)

    def reconcile_due(self, *, cluster: str, worker: str, replan: Callable[[str], object]) -> None:
        now = timezone.now()
        for name, (_, what) in [(name, due) for name, due in self.due.items() if due[0] <= now]:
            key = namespace_key(cluster, name)
            cause = Cause("grant", detail="expired") if what == "grant" else Cause("sleep")
            try:
                result = door.run([key], cause=cause, worker=worker)
                if result[key].outcome.phase is not Phase.BUSY:  # else tried next round
                    replan(name)
            except (DatabaseError, KubeError) as error:
                logger.warning("%s's moment in %s is put off: %s", what, name, error)
                return
