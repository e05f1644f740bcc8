"""`make run`: the payments tenant's repository on the forge stand-in, its prod changes
through pull requests there (merge-request mode), dev and staging pushing directly."""

import os

from django.core.management.base import BaseCommand, CommandError

from tenants.choices import ForgeKind
from tenants.models import EnvironmentTier, Tenant

# Where `make run`'s forge keeps payments' repository (under the demo git server's root).
REPOSITORY = "demo/payments"
TOKEN_VARIABLE = "BERTH_DEMO_FORGE_TOKEN"  # noqa: S105 - its name, not a token


class Command(BaseCommand):
    help = (
        "Put the demo's payments tenant in merge-request mode for prod on the forge stand-in "
        f"(its token in ${TOKEN_VARIABLE}). Idempotent."
    )

    def add_arguments(self, parser):
        parser.add_argument("--api-url", required=True, help="the forge's API root")
        parser.add_argument(
            "--git-url", required=True, help="where the forge's repositories are served"
        )

    def handle(self, *args, **options):
        token = os.environ.get(TOKEN_VARIABLE, "")
        if not token:
            raise CommandError(f"${TOKEN_VARIABLE} holds the forge's token: it is not set.")
        tenant = Tenant.objects.get(slug="payments")
        tenant.gitops_repo_url = f"{options['git_url'].rstrip('/')}/{REPOSITORY}.git"
        tenant.gitops_branch = "main"
        tenant.gitops_commit_url = f"{tenant.gitops_repo_url}/commit/{{sha}}"
        tenant.changes_by_pull_request = True
        tenant.forge_kind = ForgeKind.GITHUB
        tenant.forge_api_url = options["api_url"]
        tenant.forge_token = token
        tenant.full_clean()
        tenant.save()
        # A tier's own setting wins over the tenant's: only prod's changes wait for review.
        EnvironmentTier.objects.exclude(slug="prod").update(changes_by_pull_request=False)
        self.stdout.write(
            self.style.SUCCESS(
                f"payments: prod changes through pull requests on {REPOSITORY} "
                f"({options['api_url']})"
            )
        )
