import os

from django.core.management.base import BaseCommand, CommandError

from tenants.models import User


class Command(BaseCommand):
    help = (
        "Create or update the break-glass superuser who signs in at /admin/ with a password "
        "when the identity provider is down. The password comes from an environment variable "
        "so it never appears in shell history or process lists."
    )

    def add_arguments(self, parser):
        parser.add_argument("--username", default="admin")
        parser.add_argument("--password-env", default="BERTH_ADMIN_PASSWORD")

    def handle(self, *args, **options):
        password = os.environ.get(options["password_env"], "")
        if len(password) < 12:
            raise CommandError(
                f"Set {options['password_env']} to a password of at least 12 characters."
            )
        user, created = User.objects.get_or_create(username=options["username"])
        user.is_staff = user.is_superuser = True
        user.set_password(password)
        user.save()
        verb = "Created" if created else "Updated"
        self.stdout.write(self.style.SUCCESS(f"{verb} break-glass superuser {user.username!r}."))
