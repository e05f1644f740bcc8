"""Repository credentials as Secrets: the keys each engine reads, values stored as the API
server stores them. Plans show them redacted (`Plan.redacted`).
"""

from __future__ import annotations

import base64
from typing import Any

from provisioning.plan.model import RepoCredential, metadata_of


def encoded(values: dict[str, str]) -> dict[str, str]:
    """Secret data as the API server stores it (base64), so the live object compares."""
    return {key: base64.b64encode(value.encode()).decode() for key, value in values.items()}


def secret(
    name: str, namespace: str, labels: dict[str, str], values: dict[str, str]
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "Opaque",
        "metadata": metadata_of(name, labels, namespace),
        "data": encoded(values),
    }


def credential_values(
    credential: RepoCredential, *, https: tuple[str, str], ssh: str
) -> dict[str, str]:
    """A credential under the keys an engine reads: (user key, password key) for HTTPS,
    the key name for an SSH private key."""
    if credential.transport == "https":
        return {https[0]: credential.username, https[1]: credential.password}
    return {ssh: credential.ssh_private_key}
