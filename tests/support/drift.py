"""Drift made by hand on a provisioned world (tests/support/gitops_loop.py): a quota edited
on the cluster, a file deleted from the repository, an object Berth no longer plans."""

from tests.support.cluster import as_admin
from tests.support.gitserver import git

QUOTA = "/api/v1/namespaces/payments-shop-dev/resourcequotas/berth-quota"


def hand_edit_quota(sandbox) -> None:
    quota = as_admin(sandbox, "GET", QUOTA)
    quota["spec"]["hard"]["requests.cpu"] = "64"
    quota["metadata"].pop("managedFields", None)
    as_admin(sandbox, "PUT", QUOTA, quota)


def delete_file(world, tmp_path, path: str) -> None:
    checkout = tmp_path / "by-hand"
    git("clone", "--quiet", str(world["bare"]), str(checkout))
    git("rm", "--quiet", path, cwd=checkout)
    git("commit", "--quiet", "-m", "Remove a file by hand", cwd=checkout)
    git("push", "--quiet", "origin", "main", cwd=checkout)


def orphan_config_map(sandbox) -> None:
    as_admin(
        sandbox,
        "POST",
        "/api/v1/namespaces/payments-shop-dev/configmaps",
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": "left-behind",
                "labels": {"app.kubernetes.io/managed-by": "berth", "berth.dev/tenant": "payments"},
            },
            "data": {"was": "Berth's once"},
        },
    )
