"""How Berth reaches a registered cluster: its access (the credentials fingerprinted, so a
changed credential gets a new client) and the retry policy from settings. The cluster is
anything with a Cluster row's fields: this package reads no records itself."""

from __future__ import annotations

import hashlib
import threading
from typing import Any

from django.conf import settings

from provisioning.kube.client import ClusterAccess, ClusterClient
from provisioning.kube.errors import RetryPolicy


def retry_policy() -> RetryPolicy:
    return RetryPolicy(
        attempts=settings.KUBE_MAX_ATTEMPTS,
        initial_seconds=settings.KUBE_BACKOFF_SECONDS,
        max_seconds=max(settings.KUBE_BACKOFF_SECONDS * 20, 1.0),
        timeout_seconds=settings.KUBE_TIMEOUT_SECONDS,
    )


def cluster_access(cluster: Any) -> ClusterAccess:
    fingerprint = hashlib.sha256(
        f"{cluster.api_url}|{cluster.auth_method}|{cluster.credentials}|{cluster.ca_certificate}".encode()
    ).hexdigest()[:16]
    return ClusterAccess(
        key=f"{cluster.pk}:{fingerprint}",
        api_url=cluster.api_url,
        auth_method=cluster.auth_method,
        credentials=cluster.credentials,
        ca_certificate=cluster.ca_certificate,
    )


def cluster_client(cluster: Any) -> ClusterClient:
    """The cluster's client, shared by every job and check of this process that reaches it
    with the same credentials (and so its discovery)."""
    return client_for(cluster_access(cluster), retry_policy())


_clients: dict[str, ClusterClient] = {}
_clients_lock = threading.Lock()


def client_for(access: ClusterAccess, policy: RetryPolicy) -> ClusterClient:
    """One cached client per cluster (and credentials version) per worker process."""
    with _clients_lock:
        cached = _clients.get(access.key)
        if cached is None or cached.policy != policy:
            cached = _clients[access.key] = ClusterClient(access, policy)
        return cached
