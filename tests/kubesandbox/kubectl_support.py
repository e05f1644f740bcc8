"""The real kubectl (``$KUBECTL``, else the one on PATH) run against a stand-in, with the
kubeconfig the stand-in writes; what the kubectl tests share."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from kubesandbox import KubeSandbox

KUBECTL = os.environ.get("KUBECTL") or shutil.which("kubectl")
needs_kubectl = pytest.mark.skipif(KUBECTL is None, reason="no kubectl on PATH (or $KUBECTL)")

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: "nginx:1.27"}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: default}
data: {colour: blue}
"""


class Kubectl:
    def __init__(self, kubeconfig: Path) -> None:
        self.env = {**os.environ, "KUBECONFIG": str(kubeconfig), "HOME": str(kubeconfig.parent)}

    @classmethod
    def for_sandbox(cls, sandbox: KubeSandbox, directory: Path) -> Kubectl:
        kubeconfig = directory / "kubeconfig"
        kubeconfig.write_text(yaml.safe_dump(sandbox.kubeconfig()))
        return cls(kubeconfig)

    def __call__(
        self, *args: str, stdin: str | None = None, timeout: float = 30
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [KUBECTL or "kubectl", *args],
            input=stdin,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def ok(self, *args: str, stdin: str | None = None) -> str:
        result = self(*args, stdin=stdin)
        assert result.returncode == 0, result.stderr
        return result.stdout

    def refused(self, *args: str, stdin: str | None = None) -> str:
        result = self(*args, stdin=stdin)
        assert result.returncode != 0, result.stdout
        return result.stderr

    def start(self, *args: str) -> subprocess.Popen[str]:
        """A kubectl left running (a watch), its output piped."""
        return subprocess.Popen(
            [KUBECTL or "kubectl", *args],
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )


def wait_for_request(sandbox: KubeSandbox, method: str, path: str, timeout: float = 20) -> None:
    """Until the stand-in has handled this request (it logs one before sending the answer)."""
    deadline = time.monotonic() + timeout
    while not any((r["method"], r["path"]) == (method, path) for r in sandbox.requests()):
        assert time.monotonic() < deadline, f"no {method} {path} within {timeout}s"
        time.sleep(0.02)
