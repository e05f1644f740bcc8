"""Re-encrypt every secret at rest with the first key of BERTH_FERNET_KEYS (key rotation).

Rotation: put a new key first in BERTH_FERNET_KEYS (keep the old ones after it), roll the
pods, run this, then drop the old keys. Values are read with any configured key and
written back with the first, all in one transaction: a value no key decrypts stops the
command, names its row, and nothing is changed.
"""

from __future__ import annotations

from django.apps import apps
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from tenants.crypto import SecretDecryptionError
from tenants.fields import EncryptedTextField


class Command(BaseCommand):
    help = __doc__.splitlines()[0]

    def handle(self, *args: object, **options: object) -> None:
        counts: dict[str, int] = {}
        with transaction.atomic():
            for model in apps.get_models():
                fields = [
                    f.name for f in model._meta.concrete_fields if isinstance(f, EncryptedTextField)
                ]
                if fields:
                    counts[model._meta.label] = self._reencrypt(model, fields)
        for label, count in counts.items():
            self.stdout.write(f"{label}: {count} row(s) re-encrypted")
        total = sum(counts.values())
        self.stdout.write(self.style.SUCCESS(f"Re-encrypted {total} row(s) with the first key."))

    @staticmethod
    def _reencrypt(model, fields: list[str]) -> int:
        manager = model._base_manager
        count = 0
        for pk in list(manager.values_list("pk", flat=True)):
            try:
                row = manager.select_for_update().only(*fields).get(pk=pk)
            except SecretDecryptionError as exc:
                raise CommandError(f"{model._meta.label} {pk}: {exc} Nothing was changed.") from exc
            values = {name: getattr(row, name) for name in fields if getattr(row, name)}
            if values:
                manager.filter(pk=pk).update(**values)  # the field encrypts with the first key
                count += 1
        return count
