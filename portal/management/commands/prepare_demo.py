"""`make run`'s preparation in one process: each step is its own command (a platform admin
can run any of them alone), but every process Django starts costs seconds of imports, and
`make run` is for a newcomer waiting at the terminal.

Migrates while the sandbox cluster starts, waits for its kubeconfig (its CA is the demo
cluster's), then seeds the demo, points its tenants at their repositories, puts payments in
merge-request mode on the forge stand-in, makes the break-glass admin, gives the demo
cluster prices, queues the repositories' checks and the sandbox's guardrails."""

from __future__ import annotations

import socket
import time
from decimal import Decimal
from pathlib import Path
from urllib.parse import urlsplit

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from portal import sandbox
from portal.run import MIGRATED
from tenants import demo
from tenants.models import Cluster, ClusterPrice, Tenant, User
from tenants.services.prices import SINCE_ALWAYS
from tenants.tasks import request_repository_check

# Showback's demo prices (EUR, about a public cloud's list prices for on-demand capacity).
DEMO_PRICES = {
    "currency": "EUR",
    "cpu_core_hour": Decimal("0.031"),
    "memory_gib_hour": Decimal("0.0042"),
    "storage_gib_month": Decimal("0.08"),
}


def listening(url: str, deadline: float) -> bool:
    """Whether the server of `url` accepts connections before `deadline` (monotonic)."""
    where = urlsplit(url)
    while True:
        with socket.socket() as probe:
            if probe.connect_ex((where.hostname or "127.0.0.1", where.port or 80)) == 0:
                return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


class Command(BaseCommand):
    help = "Migrate and seed the demo world for make run (idempotent)."

    def add_arguments(self, parser):
        parser.add_argument("--sandbox-url", required=True)
        parser.add_argument("--sandbox-token", required=True)
        parser.add_argument(
            "--sandbox-kubeconfig",
            required=True,
            type=Path,
            help="written by the sandbox cluster once it listens: waited for",
        )
        parser.add_argument("--git-url", required=True, help="the demo git server")
        parser.add_argument("--forge-api-url", default="", help="the forge stand-in, if any")
        parser.add_argument("--wait-seconds", type=float, default=60)

    def handle(self, *args, **options):
        call_command("migrate", interactive=False, verbosity=0)
        self.stdout.write(MIGRATED)  # make run starts the web server and worker now
        kubeconfig: Path = options["sandbox_kubeconfig"]
        deadline = time.monotonic() + options["wait_seconds"]
        while not kubeconfig.exists():
            if time.monotonic() > deadline:
                raise CommandError(f"The sandbox cluster wrote no {kubeconfig}: did it start?")
            time.sleep(0.05)
        call_command(
            "seed_demo",
            sandbox_url=options["sandbox_url"],
            sandbox_token=options["sandbox_token"],
            sandbox_ca=sandbox.ca_certificate(kubeconfig),
        )
        # Each tenant's GitOps repository: a bare repository served by the demo git server.
        demo.seed_git_repos(http_url=options["git_url"])
        if options["forge_api_url"] and listening(options["forge_api_url"], deadline):
            call_command(
                "seed_demo_forge", api_url=options["forge_api_url"], git_url=options["git_url"]
            )
        elif options["forge_api_url"]:
            self.stdout.write("The forge stand-in is not listening: payments pushes directly.")
        # Made once: its password is in data/dev-secrets.env, and hashing it again on every
        # start cost most of a second.
        if not User.objects.filter(username="admin", is_superuser=True).exists():
            call_command("ensure_superuser", username="admin")
        # Prices on the demo cluster, so Costs shows figures; an admin's own are kept.
        demo_cluster = Cluster.objects.get(name="sandbox")
        if not ClusterPrice.objects.filter(cluster=demo_cluster).exists():
            ClusterPrice.objects.create(
                cluster=demo_cluster, effective_from=SINCE_ALWAYS, **DEMO_PRICES
            )
        # What the tenant pages say of each repository: checked by the worker once it starts.
        for tenant in Tenant.objects.order_by("slug"):
            request_repository_check(tenant)
        # The sandbox's guardrails (tenant roles, admission policies), by the same worker job
        # as a platform admin's install: tenant namespaces wait for them.
        call_command("install_guardrails", "sandbox")
