"""The development sandbox cluster `make run` starts: a local Kubernetes API stand-in.

Kept free of Django so the `run` launcher can use it before settings exist.
"""

from __future__ import annotations

import sys
from pathlib import Path

# What a platform team has installed on a cluster before tenants arrive.
PLATFORM_NAMESPACES = ("argocd", "kargo", "flux-system", "ingress-nginx", "berth-system")


def sandbox_command(*, port: str, data_dir: Path) -> list[str]:
    return [
        sys.executable, "-m", "kubesandbox", "--port", port,
        "--state-file", str(data_dir / "sandbox-cluster.json"),
        # Deleted namespaces linger briefly, as on a real cluster.
        "--termination-seconds", "1",
        *(f"--namespace={name}" for name in PLATFORM_NAMESPACES),
    ]
