"""The truth table reads a tenant's repository again only when its branch moved: beat
retakes every tenant's table every few minutes, and an unmoved branch costs one
`git ls-remote` of one ref, not a fetch (provisioning/gitops/snapshots.py)."""

from __future__ import annotations

from provisioning import gitops
from provisioning.reconcile.proposals import gitops_remote
from tenants import provisioner
from tests.support.drift import delete_file
from tests.support.gitserver import files_on


def asked(server) -> list[tuple[str, str]]:
    """What the git server was asked since last time, and forget it."""
    said = [(seen["method"], seen["path"].rsplit("/", 1)[-1]) for seen in server.seen]
    server.seen.clear()
    return said


def test_an_unmoved_branch_costs_one_ls_remote_and_a_moved_one_is_read_again(
    provisioned, server, tmp_path
):
    tenant = provisioned["tenant"]
    first = provisioner.take_truth(tenant)
    asked(server)
    gitops.probe(gitops_remote(tenant))
    one_ls_remote = asked(server)

    again = provisioner.take_truth(tenant)
    assert asked(server) == one_ls_remote  # no fetch: the branch is where it was
    assert [r for r in again["rows"] if r["source"] == "git"] == [
        r for r in first["rows"] if r["source"] == "git"
    ]

    # Someone removes one of Berth's files by hand: the branch moved, the table sees it.
    removed = sorted(p for p in files_on(provisioned["bare"]) if p.startswith("apps/shop/"))[0]
    delete_file(provisioned, tmp_path, removed)
    moved = provisioner.take_truth(tenant)
    assert len(asked(server)) > len(one_ls_remote)  # read again
    missing = [r["object"] for r in moved["rows"] if r["state"] == "missing_in_git"]
    assert missing == [removed]
