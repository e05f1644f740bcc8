"""Make an API token for a user and print it, once: for scripts, CI and first steps.

python manage.py create_api_token dev --scopes read,request --name ci --expires-days 30
"""

from __future__ import annotations

from datetime import timedelta

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from tenants import services
from tenants.errors import InvalidInput
from tenants.models import User
from tenants.models.tokens import TokenScope


class Command(BaseCommand):
    help = (
        "Make an API token for USERNAME and print it (only this once; Berth keeps a hash). "
        f"Scopes: {', '.join(TokenScope.values)}."
    )

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument(
            "--scopes", default="read", help="Comma-separated, e.g. read,request (default: read)."
        )
        parser.add_argument(
            "--name",
            default="command line",
            help="What the token is for (shown on the API tokens page).",
        )
        parser.add_argument(
            "--expires-days", type=int, default=None, help="Days until it expires (default: never)."
        )

    def handle(self, *args, **options):
        user = User.objects.filter(username=options["username"]).first()
        if user is None:
            raise CommandError(f"No user {options['username']!r}.")
        days = options["expires_days"]
        if days is not None and days < 1:
            raise CommandError("--expires-days must be 1 or more.")
        scopes = [scope.strip() for scope in options["scopes"].split(",") if scope.strip()]
        try:
            token, value = services.create_api_token(
                user=user,
                name=options["name"],
                scopes=scopes,
                expires_at=timezone.now() + timedelta(days=days) if days else None,
            )
        except InvalidInput as exc:
            by_field = (f"{field}: {' '.join(msgs)}" for field, msgs in exc.field_errors.items())
            raise CommandError("; ".join([*exc.messages, *by_field])) from exc
        self.stderr.write(
            f"Token {token.name!r} for {user.username} (scopes: {', '.join(token.scopes)}); "
            "it is shown only this once:"
        )
        self.stdout.write(value)
