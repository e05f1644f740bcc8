from __future__ import annotations

from django.db import models

from tenants import crypto


class EncryptedTextField(models.TextField):
    """Stores text encrypted with the configured Fernet keys; Python code sees plaintext.

    Empty values are stored as empty strings so "no secret" needs no decryption.
    """

    def from_db_value(self, value, expression, connection):
        if not value:
            return value
        return crypto.decrypt(value)

    def get_prep_value(self, value):
        value = super().get_prep_value(value)
        if not value:
            return value
        return crypto.encrypt(value)
