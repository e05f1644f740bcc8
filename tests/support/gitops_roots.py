"""Reading what the GitOps loop made (tests/support/gitops_loop.py): an object live on the
Kubernetes API stand-in, a Secret's values, a clone of the tenant's repository, and what
`kubectl kustomize` builds from one of its directories, as the engine would apply it."""

from __future__ import annotations

import base64
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.support.gitserver import git

ARGO = "argoproj.io/v1alpha1"
FLUX_KUSTOMIZE = "kustomize.toolkit.fluxcd.io/v1"
FLUX_SOURCE = "source.toolkit.fluxcd.io/v1"
KARGO = "kargo.akuity.io/v1alpha1"
RBAC = "rbac.authorization.k8s.io/v1"


def live(sandbox, kind: str, name: str, namespace: str | None = None, *, api: str = "v1"):
    return sandbox.get(kind, name, namespace, api_version=api)


def secret_values(secret: dict) -> dict[str, str]:
    return {key: base64.b64decode(value).decode() for key, value in secret["data"].items()}


def clone(world, tmp_path: Path) -> Path:
    checkout = tmp_path / "clone"
    if checkout.exists():
        shutil.rmtree(checkout)
    git("clone", "--quiet", str(world["bare"]), str(checkout))
    return checkout


def kustomize(directory: Path) -> list[dict]:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("no kubectl on PATH: `kubectl kustomize` builds what the roots apply")
    built = subprocess.run(
        [kubectl, "kustomize", str(directory)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert built.returncode == 0, f"kubectl kustomize {directory}: {built.stderr}"
    return [doc for doc in yaml.safe_load_all(built.stdout) if doc]
