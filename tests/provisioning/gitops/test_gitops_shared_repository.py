"""The tenant's repository is shared with its team, against a local bare repository:
an overlay the team edited and a file whose header the team removed are left as they are, a
path the team made a directory fails with a readable message, and a push of the team's in
between is built upon, never lost."""

from __future__ import annotations

from provisioning import gitops, reconcile
from provisioning.models import GitCommit
from tenants.choices import RequestState
from tests.support.gitops_world import berth_commits, gitops_step
from tests.support.gitserver import commits_on, files_on, push_outside_commit
from tests.support.workflow import approved, converge


def test_an_overlay_the_team_edited_is_never_clobbered_nor_deleted(writer_world):
    converge(approved(writer_world))
    edited = files_on(writer_world["bare"])["apps/shop/overlays/dev/kustomization.yaml"] + (
        "patches:\n- path: replicas.yaml\n"
    )
    push_outside_commit(writer_world["bare"], "apps/shop/overlays/dev/kustomization.yaml", edited)
    push_outside_commit(
        writer_world["bare"], "apps/shop/overlays/dev/replicas.yaml", "replicas: 3\n"
    )

    # Another environment of the same app rewrites the app's directory: dev's overlay stays.
    converge(
        approved(writer_world, app="shop", tier="staging", cluster="sandbox", cpu="1", memory="1Gi")
    )
    assert files_on(writer_world["bare"])["apps/shop/overlays/dev/kustomization.yaml"] == edited

    removal = converge(
        approved(writer_world, kind="decommission", namespace="payments-shop-dev", reason="cleanup")
    )
    files = files_on(writer_world["bare"])
    assert files["apps/shop/overlays/dev/kustomization.yaml"] == edited
    assert files["apps/shop/overlays/dev/replicas.yaml"] == "replicas: 3\n"
    assert "apps/shop/dev/application.yaml" not in files
    assert "the team changed it" in gitops_step(removal)["message"]
    assert "Left as they are:" in berth_commits(writer_world["bare"])[0]["body"]


def test_a_managed_file_whose_header_the_team_removed_is_left_alone(writer_world):
    tenancy_request = converge(approved(writer_world))
    path = "apps/shop/dev/application.yaml"
    taken = (
        files_on(writer_world["bare"])[path]
        .split("\n", 1)[1]
        .replace("selfHeal: true", "selfHeal: false")
    )
    push_outside_commit(writer_world["bare"], path, taken)

    written = reconcile.write_gitops(request_id=tenancy_request.pk)

    assert written.outcome == "unchanged"
    assert "not Berth's any more" in written.message
    assert files_on(writer_world["bare"])[path] == taken


def test_a_directory_where_berth_writes_a_file_fails_with_a_readable_message(writer_world):
    push_outside_commit(writer_world["bare"], "apps/shop/dev/application.yaml/oops.txt", "mine\n")

    tenancy_request = converge(approved(writer_world))

    assert tenancy_request.state == RequestState.FAILED
    assert "cannot write apps/shop/dev/application.yaml" in tenancy_request.status_message


def test_a_push_refused_because_someone_else_pushed_is_redone_on_the_new_tip(writer_world):
    tenancy_request = approved(writer_world)
    outside = []
    real_push = gitops.Checkout.push

    def push_after_someone_else(self):
        if not outside:
            outside.append(push_outside_commit(writer_world["bare"], "team/notes.md", "hello\n"))
        return real_push(self)

    gitops.Checkout.push = push_after_someone_else
    try:
        tenancy_request = converge(tenancy_request)
    finally:
        gitops.Checkout.push = real_push

    assert tenancy_request.state == RequestState.READY
    files = files_on(writer_world["bare"])
    assert files["team/notes.md"] == "hello\n"
    assert "apps/shop/dev/application.yaml" in files
    commits = commits_on(writer_world["bare"])
    assert commits[1]["sha"] == outside[0]  # Berth's commit sits on top of the team's
    assert GitCommit.objects.get(request=tenancy_request).pushes == 2


def test_after_its_own_push_berth_builds_on_its_copy_and_still_sees_a_later_team_push(writer_world):
    """The working copy is reused as it is after Berth's own push; when the team pushed
    meanwhile, the push is refused and redone on the team's commit, which survives."""
    first = converge(approved(writer_world))
    assert GitCommit.objects.get(request=first).pushes == 1
    outside = push_outside_commit(writer_world["bare"], "team/notes.md", "hello\n")

    second = converge(
        approved(writer_world, app="cart", tier="dev", cluster="sandbox", cpu="1", memory="2Gi")
    )

    assert (first.state, second.state) == (RequestState.READY, RequestState.READY)
    files = files_on(writer_world["bare"])
    assert files["team/notes.md"] == "hello\n"
    assert {"apps/shop/dev/application.yaml", "apps/cart/dev/application.yaml"} <= set(files)
    commits = commits_on(writer_world["bare"])
    assert commits[0]["request"] == str(second.pk) and commits[1]["sha"] == outside
    # Built first on its own last push (refused: the team's commit came since), then again.
    assert GitCommit.objects.get(request=second).pushes == 2
