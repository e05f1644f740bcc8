from django.core.management.base import BaseCommand

from tenants import demo


class Command(BaseCommand):
    help = "Seed the demo world (tiers, a sandbox cluster, two tenants, their people). Idempotent."

    def add_arguments(self, parser):  # noqa: ANN001 - argparse
        parser.add_argument(
            "--sandbox-url",
            default="http://127.0.0.1:6550",
            help="URL of the local Kubernetes API stand-in the sandbox cluster points at.",
        )

    def handle(self, *args, **options):  # noqa: ANN002, ANN003 - Django API
        counts = demo.seed(sandbox_api_url=options["sandbox_url"])
        self.stdout.write(
            self.style.SUCCESS(
                "Seeded {tiers} tiers, {tenants} tenants and {people} people.".format(**counts)
            )
        )
