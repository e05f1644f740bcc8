"""Idempotent set-up of the development provider: signing key, Berth's client, kubectl's
client, demo accounts."""

from __future__ import annotations

import os
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from django.contrib.auth.models import Group, User
from django.db import transaction
from oidc_provider.models import Client, ResponseType, RSAKey

from portal.devidp import demo_password

KEY_FILE = "devidp-signing-key.pem"


def ensure_signing_key(data_dir: Path) -> RSAKey:
    """The RSA key that signs ID tokens: generated once into the data dir, then reused."""
    path = data_dir / KEY_FILE
    if not path.exists():
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        pem = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(pem)
    pem_text = path.read_text()
    with transaction.atomic():
        RSAKey.objects.exclude(key=pem_text).delete()
        return RSAKey.objects.get_or_create(key=pem_text)[0]


def _ensure_code_flow_client(*, client_id: str, **settings: str) -> Client:
    """A client of the code flow that is never asked to consent again once it has been."""
    with transaction.atomic():
        client, _ = Client.objects.update_or_create(
            client_id=client_id,
            defaults=dict(jwt_alg="RS256", require_consent=False, reuse_consent=True, **settings),
        )
        client.response_types.set(ResponseType.objects.filter(value="code"))
    return client


def ensure_berth_client(*, client_id: str, client_secret: str, berth_urls: list[str]) -> Client:
    """Berth as a confidential client using the code flow; it never asks for consent."""
    return _ensure_code_flow_client(
        client_id=client_id,
        name="Berth (development)",
        client_type="confidential",
        client_secret=client_secret,
        _redirect_uris="\n".join(f"{url}/oidc/callback/" for url in berth_urls),
        _post_logout_redirect_uris="\n".join(f"{url}/login/" for url in berth_urls),
    )


# Where kubelogin listens for the provider's answer: its default port, and the one it falls
# back to when Berth's `make run` holds 8000.
KUBELOGIN_REDIRECTS = [
    f"http://{host}:{port}" for host in ("localhost", "127.0.0.1") for port in (8000, 18000)
]


def ensure_kubectl_client(*, client_id: str) -> Client:
    """kubectl's own client (kubelogin): public, no secret, PKCE; the audience the sandbox
    cluster trusts. A kubeconfig names it, so it can hold no secret. (django-oidc-provider
    asks a person to consent for a public client every time: anyone may claim to be one.)"""
    return _ensure_code_flow_client(
        client_id=client_id,
        name="kubectl (development)",
        client_type="public",
        client_secret="",
        _redirect_uris="\n".join(KUBELOGIN_REDIRECTS),
        _post_logout_redirect_uris="",
    )


def ensure_people(people: list[dict]) -> None:
    """One account per demo person, in their groups; the password is the username twice."""
    with transaction.atomic():
        for person in people:
            user, created = User.objects.update_or_create(
                username=person["username"],
                defaults={
                    "first_name": person["first_name"],
                    "last_name": person["last_name"],
                    "email": person["email"],
                    "is_active": True,
                },
            )
            if created or not user.has_usable_password():
                user.set_password(demo_password(user.username))
                user.save(update_fields=["password"])
            user.groups.set(Group.objects.get_or_create(name=name)[0] for name in person["groups"])
