"""The pure GitOps rendering meeting a repository: converging what is there with what is
rendered (managed files follow, skeletons are created once, the team's files are never
touched), the unified diff of the change, and the commit message that says what and why."""

from __future__ import annotations

from dataclasses import replace

from provisioning import gitops_plan
from tests.support.gitops_rendering import inputs, scope


def test_converging_an_unchanged_repository_changes_nothing():
    spec = inputs()
    rendered = gitops_plan.render_files(spec)
    assert gitops_plan.converge(rendered, rendered, scope(spec)).files == rendered


def test_a_later_request_with_the_same_content_keeps_the_header_of_the_first():
    spec = inputs()
    first = gitops_plan.render_files(spec)
    later = gitops_plan.render_files(replace(spec, request_id=99))
    converged = gitops_plan.converge(first, later, scope(spec))
    assert converged.files == first
    assert gitops_plan.changes(first, converged.files) == {}


def test_a_managed_file_follows_the_rendering_and_goes_with_its_environment():
    before = gitops_plan.render_files(inputs(tiers=("dev", "staging", "prod")))
    after_spec = inputs(tiers=("dev", "prod"), request_id=40)
    converged = gitops_plan.converge(
        before, gitops_plan.render_files(after_spec), scope(after_spec)
    )
    changed = gitops_plan.changes(before, converged.files)
    assert changed == {
        "apps/shop/kargo/stages.yaml": "modified",  # prod now follows dev
        "apps/shop/overlays/staging/kustomization.yaml": "deleted",  # untouched skeleton
        "apps/shop/staging/application.yaml": "deleted",
        "apps/shop/staging/kustomization.yaml": "deleted",
    }
    assert converged.files["apps/shop/kargo/stages.yaml"].startswith(
        "# Managed by Berth (request #40)"
    )


def test_a_skeleton_is_created_once_and_never_overwritten():
    spec = inputs(tiers=("dev",))
    rendered = gitops_plan.render_files(spec)
    overlay = "apps/shop/overlays/dev/kustomization.yaml"
    edited = {**rendered, overlay: rendered[overlay] + "patches:\n- path: replicas.yaml\n"}
    converged = gitops_plan.converge(edited, rendered, scope(spec))
    assert converged.files[overlay] == edited[overlay]
    assert not converged.notes


def test_an_edited_skeleton_survives_its_environment_with_a_note():
    spec = inputs(tiers=("dev",))
    rendered = gitops_plan.render_files(spec)
    overlay = "apps/shop/overlays/dev/kustomization.yaml"
    edited = {**rendered, overlay: rendered[overlay] + "images:\n- name: shop\n  newTag: 1.2.3\n"}
    gone = replace(spec, namespaces=())
    converged = gitops_plan.converge(edited, gitops_plan.render_files(gone), scope(spec))
    assert converged.files == {overlay: edited[overlay]}
    assert converged.notes == (f"{overlay}: kept, the team changed it since Berth created it",)


def test_files_the_team_owns_are_never_touched():
    spec = inputs(tiers=("dev",))
    rendered = gitops_plan.render_files(spec)
    application = "apps/shop/dev/application.yaml"
    taken_over = rendered[application].split("\n", 1)[1]  # header line removed
    current = {
        **rendered,
        application: taken_over,
        "apps/shop/overlays/dev/deployment.yaml": "kind: Deployment\n",
        "elsewhere/file.yaml": "outside the scope\n",
    }
    converged = gitops_plan.converge(current, rendered, scope(spec))
    assert converged.files[application] == taken_over
    assert converged.files["apps/shop/overlays/dev/deployment.yaml"] == "kind: Deployment\n"
    assert "elsewhere/file.yaml" not in converged.files  # outside the scope: not ours to list
    assert converged.notes == (
        f"{application}: not Berth's any more (its first line is not Berth's header)",
    )
    gone = gitops_plan.converge(current, {}, scope(spec)).files
    assert gone == {
        application: taken_over,
        "apps/shop/overlays/dev/deployment.yaml": "kind: Deployment\n",
    }


def test_diff_files_is_a_unified_diff_of_added_changed_and_deleted_files():
    diff = gitops_plan.diff_files(
        {"a.yaml": "x: 1\n", "b.yaml": "y: 1\n"}, {"a.yaml": "x: 2\n", "c.yaml": "z: 1"}
    )
    assert diff == (
        "--- a/a.yaml\n+++ b/a.yaml\n@@ -1 +1 @@\n-x: 1\n+x: 2\n"
        "--- a/b.yaml\n+++ /dev/null\n@@ -1 +0,0 @@\n-y: 1\n"
        "--- /dev/null\n+++ b/c.yaml\n@@ -0,0 +1 @@\n+z: 1\n"
    )
    assert gitops_plan.diff_files({"a": "same\n"}, {"a": "same\n"}) == ""


def test_commit_message_says_what_and_why_and_ends_in_trailers():
    message = gitops_plan.commit_message(
        kind="decommission",
        request_id=14,
        tenant="payments",
        app="shop",
        engine="argocd_kargo",
        namespaces=["payments-shop-dev"],
        changed={"apps/shop/dev/application.yaml": "deleted"},
        notes=["apps/shop/overlays/dev/kustomization.yaml: kept, the team changed it"],
        approvers=["pat", "olivia"],
        reason="project cancelled",
    )
    subject, *rest = message.split("\n\n")
    assert subject == "Remove payments-shop-dev (decommission request #14)"
    assert "which asked to remove payments-shop-dev" in rest[0]
    assert "Reason given: project cancelled" in message
    assert "  deleted   apps/shop/dev/application.yaml" in message
    assert message.endswith("\n\nBerth-Request: 14\nApproved-by: pat\nApproved-by: olivia\n")
