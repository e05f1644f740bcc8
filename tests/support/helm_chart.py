"""The Helm chart in deploy/helm/berth as its tests (tests/project/test_helm_chart_*.py) see
it: deploy/helm/check_chart.py (`check_chart`), the engine that renders it (ENGINE, and
`needs_helm` to skip, saying why, without one), the CI values files, who Berth is on the
cluster it runs in, and helpers that pick objects and rules out of a rendering.

Rendered with the `helm` binary when one is on PATH, else with the helm-python-sdk package
(Helm's Go engine as a library, a dev dependency).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from provisioning.guardrails import BERTH_ROLES
from tests.support.authz import Subject

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("check_chart", ROOT / "deploy/helm/check_chart.py")
check_chart = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_chart)

try:
    ENGINE = check_chart.describe_engine()
    UNAVAILABLE = ""
except check_chart.HelmUnavailable as exc:
    ENGINE = ""
    UNAVAILABLE = f"cannot render the Helm chart: {exc}"
needs_helm = pytest.mark.skipif(bool(UNAVAILABLE), reason=UNAVAILABLE)

VALUES_FILES = {path.stem: path for path in check_chart.CI_VALUES}
WORKLOADS = ("Deployment", "Job")
# Who Berth is on the cluster it runs in: the chart's ServiceAccount in the release namespace.
BERTH = Subject.service_account(check_chart.NAMESPACE, "berth")
EDIT = BERTH_ROLES[0]

RBAC_KINDS = {"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"}


def values(name: str = "default-values") -> dict:
    return check_chart.load_values(VALUES_FILES[name])


def objects_of(rendered: list[dict], kind: str) -> list[dict]:
    return [obj for obj in rendered if obj["kind"] == kind]


def cluster_role(rendered: list[dict]) -> dict:
    (role,) = objects_of(rendered, "ClusterRole")
    return role


def pod_specs(rendered: list[dict]) -> dict[str, dict]:
    return {
        obj["metadata"]["name"]: obj["spec"]["template"]["spec"]
        for obj in rendered
        if obj["kind"] in WORKLOADS
    }


def rbac_rules(rendered: list[dict]) -> list[dict]:
    return [
        rule for obj in rendered if obj["kind"] in ("ClusterRole", "Role") for rule in obj["rules"]
    ]
