"""Encryption of secrets at rest with Fernet (AES-128-CBC + HMAC), keys from settings."""

from __future__ import annotations

import base64
import hashlib
from functools import cache

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings


class SecretDecryptionError(Exception):
    """A stored secret cannot be decrypted with any configured key."""


@cache
def _fernet(keys: tuple[str, ...], fallback_secret: str) -> MultiFernet:
    if not keys:
        # Only reachable with DEBUG on (settings refuse to start otherwise).
        derived = base64.urlsafe_b64encode(hashlib.sha256(fallback_secret.encode()).digest())
        return MultiFernet([Fernet(derived)])
    return MultiFernet([Fernet(key.encode()) for key in keys])


def _current() -> MultiFernet:
    return _fernet(tuple(settings.FERNET_KEYS), settings.SECRET_KEY)


def encrypt(plaintext: str) -> str:
    return _current().encrypt(plaintext.encode()).decode()


def decrypt(token: str) -> str:
    try:
        return _current().decrypt(token.encode()).decode()
    except InvalidToken as exc:
        raise SecretDecryptionError(
            "A stored secret could not be decrypted: BERTH_FERNET_KEYS does not hold the key "
            "it was encrypted with."
        ) from exc
