"""How a client reaches one cluster: its access (no database in it) made into the
Kubernetes client's ApiClient, and where that cluster's discovery is cached."""

from __future__ import annotations

import functools
import hashlib
import tempfile
from dataclasses import dataclass
from pathlib import Path

import yaml
from kubernetes import client as k8s
from kubernetes import config as k8s_config


@dataclass(frozen=True)
class ClusterAccess:
    """How to reach one cluster: enough to build a client, nothing from the database."""

    key: str  # identifies the cluster and its credentials' version, for the client cache
    api_url: str
    auth_method: str  # token | kubeconfig | in_cluster
    credentials: str = ""
    ca_certificate: str = ""


@functools.cache
def _discovery_dir() -> Path:
    # Private to this process: the client's default cache is shared by every process and
    # keyed only by host, so it could serve one cluster's API list for another.
    return Path(tempfile.mkdtemp(prefix="berth-discovery-"))


def discovery_cache_file(access_key: str) -> str:
    digest = hashlib.sha256(access_key.encode()).hexdigest()[:16]
    return str(_discovery_dir() / f"{digest}.json")


def api_client_for(access: ClusterAccess) -> k8s.ApiClient:
    if access.auth_method == "kubeconfig":
        return k8s_config.new_client_from_config_dict(yaml.safe_load(access.credentials))
    configuration = k8s.Configuration()
    if access.auth_method == "in_cluster":
        k8s_config.load_incluster_config(client_configuration=configuration)
    else:
        configuration.host = access.api_url
        if access.credentials:
            configuration.api_key = {"BearerToken": access.credentials}
            configuration.api_key_prefix = {"BearerToken": "Bearer"}
        if access.ca_certificate:
            ca_file = Path(tempfile.mkstemp(prefix="berth-ca-", suffix=".pem")[1])
            ca_file.write_text(access.ca_certificate)
            configuration.ssl_ca_cert = str(ca_file)
    # Retries are ours (with backoff and a count); urllib3 must not retry underneath.
    configuration.retries = False
    return k8s.ApiClient(configuration)
