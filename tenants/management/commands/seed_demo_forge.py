"""`make run`: the payments tenant's repository on the forge stand-in, its prod changes
through pull requests there (merge-request mode), dev and staging pushing directly; and the
repository's webhook on the forge pointed at Berth's receiver, so a merge reaches Berth at
once rather than at its next check."""

import os
import secrets
from urllib.parse import urlsplit

from django.core.management.base import BaseCommand, CommandError
from django.urls import reverse
from github import Auth, Github, GithubException

from tenants.choices import ForgeKind
from tenants.models import EnvironmentTier, Tenant

# Where `make run`'s forge keeps payments' repository (under the demo git server's root).
REPOSITORY = "demo/payments"
TOKEN_VARIABLE = "BERTH_DEMO_FORGE_TOKEN"  # noqa: S105 - its name, not a token
HOOK_EVENTS = ["pull_request"]
TIMEOUT_SECONDS = 10


def berth_url() -> str:
    """Where `make run` serves Berth (portal/run.py's `BERTH_HOST` and `BERTH_PORT`)."""
    host = os.environ.get("BERTH_HOST", "127.0.0.1")
    return f"http://{host}:{os.environ.get('BERTH_PORT', '8000')}"


class Command(BaseCommand):
    help = (
        "Put the demo's payments tenant in merge-request mode for prod on the forge stand-in "
        f"(its token in ${TOKEN_VARIABLE}) and point the repository's webhook at Berth. "
        "Idempotent."
    )

    def add_arguments(self, parser):
        parser.add_argument("--api-url", required=True, help="the forge's API root")
        parser.add_argument(
            "--git-url", required=True, help="where the forge's repositories are served"
        )
        parser.add_argument(
            "--berth-url",
            default="",
            help="where the forge delivers webhooks to Berth (default: make run's web "
            "server, http://$BERTH_HOST:$BERTH_PORT)",
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
        # Kept across runs (encrypted, as a platform admin's would be); made the first time.
        if not tenant.forge_webhook_secret:
            tenant.forge_webhook_secret = secrets.token_urlsafe(32)
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
        receiver = (options["berth_url"] or berth_url()).rstrip("/") + reverse(
            "forge-webhook", kwargs={"slug": tenant.slug}
        )
        try:
            said = point_hook(
                options["api_url"], token, REPOSITORY, receiver, tenant.forge_webhook_secret
            )
        except (GithubException, OSError) as error:
            # Berth still hears of merges at its periodic check of the pull requests.
            self.stderr.write(f"payments: no webhook on {REPOSITORY}: the forge said {error}")
            return
        self.stdout.write(self.style.SUCCESS(f"payments: {said}"))


def point_hook(api_url: str, token: str, repository: str, receiver: str, secret: str) -> str:
    """One webhook on `repository` delivering its `pull_request` events to `receiver`,
    signed with `secret`: the hook that delivers to the receiver's path (on whatever host
    and port it had) is updated, any other such hook removed, else one is made. The forge
    never gives a secret back, so the one it has is set again each time."""
    config = {"url": receiver, "content_type": "json", "secret": secret, "insecure_ssl": "0"}
    client = Github(
        base_url=api_url.rstrip("/"),
        auth=Auth.Token(token),
        timeout=TIMEOUT_SECONDS,
        retry=None,
        seconds_between_requests=0,
        seconds_between_writes=0,
    )
    try:
        repo = client.get_repo(repository)
        path = urlsplit(receiver).path
        ours = [h for h in repo.get_hooks() if urlsplit(h.config.get("url", "")).path == path]
        if not ours:
            repo.create_hook("web", config, events=HOOK_EVENTS, active=True)
            return f"webhook on {repository} made, delivering to {receiver}"
        kept, *extra = ours
        for hook in extra:
            hook.delete()
        moved = kept.config.get("url") != receiver
        kept.edit("web", config, events=HOOK_EVENTS, active=True)
        return f"webhook on {repository} {'moved to' if moved else 'kept at'} {receiver}"
    finally:
        client.close()
