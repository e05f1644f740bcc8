"""One door into clusters and repositories: only the reconcile (provisioning/reconcile/)
calls the cluster writer (a client's apply or delete, `apply_object`) and the repository
writer (`write_batch`, `write_branch`, `write_gitops*`); every other source of change
(campaigns, the watcher, beat's sweep, Repair, deploy tokens, merges) reaches them by a key
it queues or reconciles through the door. And one comparison of desired with live serves
the watcher, the sweep and the truth table."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("provisioning", "tenants", "portal")

CLUSTER_WRITES = {"apply", "delete", "apply_object", "merge_patch"}
REPOSITORY_WRITES = {"write_batch", "write_branch", "write_gitops", "write_gitops_all"}

# Where writer calls belong: the door, the writers themselves, and the install of the
# platform's own guardrails (cluster-wide objects of Berth's, no tenant's).
ALLOWED = (
    "provisioning/reconcile/",
    "provisioning/kube/",
    "provisioning/gitops/",
    "provisioning/bootstrap.py",
)


def product_modules() -> list[Path]:
    found = []
    for package in PRODUCT:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" not in path.parts:
                found.append(path)
    return found


def writer_calls(path: Path) -> list[str]:
    """`name(` or `receiver.name(` calls of a writer, where the receiver is a cluster
    client (an `.apply` of anything else, a form's or a queryset's `.delete`, is not)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id in REPOSITORY_WRITES | {"apply_object"}:
            found.append(f"{func.id} (line {node.lineno})")
        elif isinstance(func, ast.Attribute):
            receiver = ast.unparse(func.value)
            to_client = func.attr in CLUSTER_WRITES and "client" in receiver.lower()
            if func.attr in REPOSITORY_WRITES or to_client:
                found.append(f"{receiver}.{func.attr} (line {node.lineno})")
    return found


def test_only_the_reconcile_writes_to_clusters_and_repositories():
    outside = {}
    for path in product_modules():
        where = path.relative_to(ROOT).as_posix()
        if where.startswith(ALLOWED):
            continue
        calls = writer_calls(path)
        if calls:
            outside[where] = calls
    assert outside == {}, "write through provisioning.reconcile (enqueue or run a key)"


def test_the_check_finds_a_writer_call_where_one_is():
    """The check above is not blind: it finds the door's own calls."""
    runs = writer_calls(ROOT / "provisioning/reconcile/applying.py")
    assert any("client.apply" in call for call in runs)
    assert any("client.delete" in call for call in runs)
    commits = writer_calls(ROOT / "provisioning/reconcile/commits.py")
    assert any("write_batch" in call for call in commits)


def calls_named(path: Path, name: str) -> bool:
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Call):
            func = node.func
            called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            if called == name:
                return True
    return False


def test_one_comparison_serves_the_watcher_the_sweep_and_the_truth_table():
    comparers = [
        "provisioning/jobs/watch.py",  # the watcher, confirming what its digests flagged
        "provisioning/reconcile/namespace.py",  # the reconcile of a key: sweep, repair, waves
        "provisioning/jobs/truth.py",  # the truth table
        "provisioning/guardrails/stamp.py",  # the guardrails, verified by content
    ]
    for where in comparers:
        assert calls_named(ROOT / where, "object_finding"), where
    # The field-by-field walk lives in one module, and nothing else walks objects itself.
    walkers = [
        path.relative_to(ROOT).as_posix()
        for path in product_modules()
        if calls_named(path, "differences")
    ]
    assert walkers == ["provisioning/plan/compare.py"]
