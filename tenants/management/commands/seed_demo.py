from django.core.management.base import BaseCommand

from tenants import demo


class Command(BaseCommand):
    help = "Seed the demo world (tiers, a sandbox cluster, two tenants, their people). Idempotent."

    def add_arguments(self, parser):
        parser.add_argument(
            "--sandbox-url",
            default="http://127.0.0.1:6550",
            help="URL of the local Kubernetes API stand-in the sandbox cluster points at.",
        )
        parser.add_argument(
            "--sandbox-token",
            default="",
            help="the bearer token Berth signs in to the sandbox with",
        )
        parser.add_argument(
            "--sandbox-ca",
            default="",
            help="the PEM of the CA the sandbox's HTTPS certificate is from",
        )

    def handle(self, *args, **options):
        counts = demo.seed(
            sandbox_api_url=options["sandbox_url"],
            sandbox_token=options["sandbox_token"],
            sandbox_ca=options["sandbox_ca"],
        )
        self.stdout.write(
            self.style.SUCCESS(
                "Seeded {tiers} tiers, {tenants} tenants and {people} people.".format(**counts)
            )
        )
