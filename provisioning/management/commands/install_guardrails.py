from django.core.management.base import BaseCommand, CommandError

from provisioning import tasks
from tenants.models import Cluster
from tenants.queue import enqueue


class Command(BaseCommand):
    help = (
        "Queue the install of Berth's guardrails (tenant roles, admission policies) on "
        "clusters, as the admin's action does; --now installs them here and waits."
    )

    def add_arguments(self, parser):
        parser.add_argument("clusters", nargs="+", help="Cluster names.")
        parser.add_argument(
            "--now",
            action="store_true",
            help="Install in this process instead of queueing a worker job.",
        )

    def handle(self, *args, **options):
        for name in options["clusters"]:
            cluster = Cluster.objects.filter(name=name).first()
            if cluster is None:
                raise CommandError(f"There is no cluster {name!r}.")
            if options["now"]:
                outcome = tasks.install_guardrails(cluster.pk)
                if outcome.startswith("failed"):
                    raise CommandError(f"{name}: {outcome}")
                self.stdout.write(f"{name}: {outcome}")
            elif enqueue(tasks.install_guardrails, cluster.pk):
                self.stdout.write(f"{name}: guardrail install queued for a worker.")
            else:
                raise CommandError(f"{name}: the task queue is unreachable; nothing queued.")
