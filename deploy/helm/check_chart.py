"""Lint and render Berth's Helm chart: `helm lint --strict` and `helm template`.

    python deploy/helm/check_chart.py [--output DIR]
    python deploy/helm/check_chart.py --berth-rbac FILE [--namespace NS]

The second form writes only Berth's ServiceAccount, its RBAC and the admission policies that
fence it, as the chart renders them with its default values into NS: `make run` gives them
to the sandbox cluster so Berth there has exactly the rights a real installation gives it
(tests do the same through `berth_rbac`).

Checks the chart with every values file in deploy/helm/berth/ci/ (the chart-testing
convention). Uses the `helm` binary when one is on PATH, otherwise Helm's own Go engine
as a library (the `helm-python-sdk` package, a dev dependency): the same lint rules and
template rendering, no binary to download. tests/project/test_helm_chart_*.py import `render` and
check the objects (security context, RBAC, hooks, Kubernetes schema).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

CHART = Path(__file__).resolve().parent / "berth"
CI_VALUES = sorted((CHART / "ci").glob("*-values.yaml"))
RELEASE = "berth"
NAMESPACE = "berth"
WARNING = 2  # helm's lint severities: 1 info, 2 warning, 3 error


class HelmUnavailable(RuntimeError):
    pass


def _helm(*args: str) -> subprocess.CompletedProcess:
    binary = shutil.which("helm")
    assert binary, "engine() said there is a helm binary"
    return subprocess.run([binary, *args], capture_output=True, text=True, check=False)  # noqa: S603 - the helm binary, our arguments


def engine() -> str:
    """Which Helm does the work: the binary if present, else the library, else none."""
    if shutil.which("helm"):
        return "helm"
    try:
        import helm_python  # noqa: F401
    except (ImportError, OSError) as exc:  # OSError: the bundled library does not load
        raise HelmUnavailable(
            "neither a helm binary on PATH nor the helm-python-sdk package "
            f"(pip install helm-python-sdk): {exc}"
        ) from exc
    return "helm-python-sdk"


def describe_engine() -> str:
    name = engine()
    if name == "helm":
        return f"helm binary {_helm('version', '--short').stdout.strip()}"
    import helm_python

    return (
        f"helm-python-sdk (Helm SDK {helm_python.helm_sdk_version()}, "
        f"libhelm_c {helm_python.helm_c_version()})"
    )


def _values_file(values: dict[str, Any], directory: str) -> str:
    path = Path(directory) / "values.yaml"
    path.write_text(yaml.safe_dump(values))
    return str(path)


def lint(values: dict[str, Any]) -> list[str]:
    """`helm lint --strict`: the warnings and errors, empty when the chart is clean."""
    if engine() == "helm":
        with tempfile.TemporaryDirectory() as tmp:
            result = _helm("lint", str(CHART), "--strict", "-f", _values_file(values, tmp))
        if result.returncode == 0:
            return []
        found = [
            line for line in result.stdout.splitlines() if "[ERROR]" in line or "[WARN" in line
        ]
        return found or [result.stdout + result.stderr]
    import helm_python

    report = helm_python.lint(str(CHART), values, strict=True, namespace=NAMESPACE)
    problems = [
        f"{message['path']}: {message['error']}"
        for message in report.get("messages", [])
        if message.get("severity", 0) >= WARNING
    ]
    errors = [e for e in report.get("errors") or [] if not any(e in p for p in problems)]
    return problems + errors


def render(
    values: dict[str, Any], *, release: str = RELEASE, namespace: str = NAMESPACE
) -> list[dict[str, Any]]:
    """`helm template`: the chart's objects (hooks included) as dicts, in template order."""
    if engine() == "helm":
        with tempfile.TemporaryDirectory() as tmp:
            values_file = _values_file(values, tmp)
            result = _helm("template", release, str(CHART), "-n", namespace, "-f", values_file)
        if result.returncode != 0:
            raise RuntimeError(result.stderr)
        manifests = [result.stdout]
    else:
        import helm_python

        with helm_python.Chart.load(str(CHART)) as chart:
            rendered = chart.render(values, name=release, namespace=namespace, is_install=True)
        manifests = [text for path, text in sorted(rendered.items()) if path.endswith(".yaml")]
    return [
        document
        for text in manifests
        for document in yaml.safe_load_all(text)
        if document  # templates that render nothing, or only comments
    ]


def load_values(path: Path) -> dict[str, Any]:
    return yaml.safe_load(path.read_text()) or {}


RBAC_KINDS = ("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")
# What RBAC cannot say of Berth (admission.berthLeastPrivilege): matched to Berth's user.
LEAST_PRIVILEGE_POLICIES = ("berth-own-namespaces", "berth-own-objects", "berth-own-argocd-secrets")
ADMISSION_KINDS = ("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding")


def berth_rbac(namespace: str) -> list[dict[str, Any]]:
    """Berth's ServiceAccount, ClusterRole, Role and their bindings, and the admission
    policies that keep Berth to its own namespaces and Argo CD repository Secrets, rendered
    with the default values into `namespace` (namespaced objects carry it, as
    `helm install -n` does)."""
    objects = []
    for obj in render(load_values(CHART / "ci" / "default-values.yaml"), namespace=namespace):
        fences_berth = (
            obj["kind"] in ADMISSION_KINDS and obj["metadata"]["name"] in LEAST_PRIVILEGE_POLICIES
        )
        if obj["kind"] not in RBAC_KINDS and not fences_berth:
            continue
        if obj["kind"] in ("ServiceAccount", "Role", "RoleBinding"):
            obj["metadata"].setdefault("namespace", namespace)
        objects.append(obj)
    return objects


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, help="write each rendering here as YAML")
    parser.add_argument(
        "--berth-rbac",
        type=Path,
        metavar="FILE",
        help="only write Berth's ServiceAccount, RBAC and the admission "
        "policies fencing it here, and stop",
    )
    parser.add_argument(
        "--namespace",
        default="berth-system",
        help="Berth's namespace, for --berth-rbac (default: berth-system)",
    )
    args = parser.parse_args()
    if args.berth_rbac:
        args.berth_rbac.write_text(yaml.safe_dump_all(berth_rbac(args.namespace)))
        return 0
    try:
        print(f"chart {CHART} with {describe_engine()}")
    except HelmUnavailable as exc:
        print(f"cannot check the chart: {exc}", file=sys.stderr)
        return 2
    failed = False
    for path in CI_VALUES:
        values = load_values(path)
        problems = lint(values)
        for problem in problems:
            print(f"  lint {path.name}: {problem}")
        failed |= bool(problems)
        try:
            objects = render(values)
        except Exception as exc:
            print(f"  template {path.name}: {exc}")
            failed = True
            continue
        kinds = sorted({obj["kind"] for obj in objects})
        print(f"  {path.name}: {'lint clean, ' if not problems else ''}{len(objects)} objects")
        print(f"    {', '.join(kinds)}")
        if args.output:
            args.output.mkdir(parents=True, exist_ok=True)
            (args.output / path.name.replace("-values", "")).write_text(
                yaml.safe_dump_all(objects, sort_keys=False)
            )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
