import os
import signal
import socket
import threading
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from provisioning.jobs.watch_streams import Timing
from provisioning.jobs.watch_supervisor import watch_clusters


class Command(BaseCommand):
    help = (
        "Watch every cluster Berth applies to and record drift as it happens (one "
        "watcher per cluster across all replicas); runs until stopped."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--heartbeat-file",
            default=os.environ.get("BERTH_WATCHER_HEARTBEAT_FILE", ""),
            help="Touched at every heartbeat: a liveness probe checks its age.",
        )
        parser.add_argument(
            "--resync-seconds",
            type=float,
            default=float(os.environ.get("BERTH_WATCH_RESYNC_SECONDS", 3600)),
            help="A LIST per kind this often, as a safety net.",
        )

    def handle(self, *args, **options):
        timing = Timing(resync_seconds=options["resync_seconds"])
        if timing.heartbeat_seconds <= 0 or timing.lease_seconds < 3 * timing.heartbeat_seconds:
            raise CommandError(
                f"BERTH_WATCH_LEASE_SECONDS ({timing.lease_seconds:g}) must be at least three "
                f"beats of BERTH_WATCH_HEARTBEAT_SECONDS ({timing.heartbeat_seconds:g}): a "
                "holder that is merely slow would lose its cluster"
            )
        stop = threading.Event()
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, lambda *_: stop.set())
        beat = Path(options["heartbeat_file"]) if options["heartbeat_file"] else None
        holder = f"{socket.gethostname()}:{os.getpid()}"
        self.stdout.write(f"watching clusters as {holder}")
        watch_clusters(
            holder=holder,
            stop=stop,
            timing=timing,
            on_beat=beat.touch if beat else None,
        )
