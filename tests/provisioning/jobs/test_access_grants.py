"""Access grants on the cluster: approved, the person is bound in that namespace alone, with
what the tier's role allows; at the grant's end (the watcher knows it) or when revoked, the
binding goes; one re-made by hand after the end is drift, removed; the guardrails refuse a
grant beyond the tier's roles."""

from __future__ import annotations

from datetime import timedelta

import pytest
import requests
import time_machine
from django.utils import timezone

from provisioning import tasks
from provisioning.jobs import sweep_namespace
from provisioning.models import QueuedKey
from provisioning.reconcile import door
from tenants import provisioner, services
from tenants.choices import GuardrailsMode, NamespaceState, RequestState
from tenants.errors import InvalidInput
from tenants.models import AccessGrant, AuditEvent, EnvironmentTier, Namespace, User
from tests.support.authz import LiveCluster, Subject
from tests.support.cluster import as_admin
from tests.support.gitops_loop import approved_namespace, built_on_the_loop, work
from tests.support.watching import eventually, synced, watcher
from tests.support.workflow import approve_if_needed

SAM = "oidc:devidp-sam"  # what the cluster calls sam (of search) through OIDC


# `sandbox` is the folder's stand-in (tests/provisioning/conftest.py).


@pytest.fixture
def namespace(gitops_world, sandbox) -> Namespace:
    """payments-shop-dev on a cluster with Berth's guardrails and tenant roles installed;
    built once per test process."""

    def build() -> None:
        cluster = gitops_world["cluster"]
        cluster.guardrails = GuardrailsMode.BERTH
        cluster.save(update_fields=["guardrails"])
        assert not tasks.install_guardrails(cluster.pk).startswith("failed")
        approved_namespace(gitops_world, "shop", "dev")
        work()

    built_on_the_loop(gitops_world, sandbox, "guarded-shop", build)
    return Namespace.objects.get(name="payments-shop-dev", state=NamespaceState.ACTIVE)


def sam_may(sandbox, verb: str, resource: str, where: str) -> bool:
    group = "apps" if resource == "deployments" else ""
    sam = Subject.user(SAM, "search-devs", "system:authenticated")
    return LiveCluster.over(sandbox).can_i(sam, verb, group, resource, where)


def granted(gitops_world, namespace, *, role="member", duration="1h") -> AccessGrant:
    grant = services.request_access(
        person=User.objects.get(username="sam"),
        namespace=namespace.name,
        role=role,
        duration=duration,
        reason="debug the search integration",
    )
    approve_if_needed(grant.request, approver=gitops_world["admin"])
    work()
    grant.refresh_from_db()
    assert grant.request.state == RequestState.READY, grant.request.status_message
    return grant


def test_a_grant_binds_the_person_there_alone_until_its_end(gitops_world, sandbox, namespace):
    assert not sam_may(sandbox, "create", "deployments", namespace.name)
    grant = granted(gitops_world, namespace)
    assert grant.state == "active"
    assert abs(grant.expires_at - (timezone.now() + timedelta(hours=1))) < timedelta(minutes=1)
    binding = sandbox.get("RoleBinding", f"berth-access-{grant.pk}", namespace.name)
    assert binding["subjects"] == [
        {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": SAM}
    ]
    assert binding["metadata"]["labels"]["berth.dev/access-grant"] == str(grant.pk)
    assert sam_may(sandbox, "create", "deployments", namespace.name)
    assert not sam_may(sandbox, "create", "deployments", "payments-gitops")
    assert not sam_may(sandbox, "create", "rolebindings", namespace.name)
    # Drift and the sweep take the live grant's binding for Berth's own.
    assert sweep_namespace(namespace) == []

    with time_machine.travel(grant.expires_at + timedelta(seconds=1)):
        sweep_namespace(namespace)
        grant.refresh_from_db()
        assert grant.state == "expired" and grant.ended_at is not None
    assert sandbox.get("RoleBinding", f"berth-access-{grant.pk}", namespace.name) is None
    assert not sam_may(sandbox, "create", "deployments", namespace.name)
    ended = AuditEvent.objects.get(action="access.ended")
    assert ended.after["why"] == "expired" and ended.after["binding_removed"] is True


def binding_of(sandbox, grant: AccessGrant, namespace: Namespace) -> dict | None:
    return sandbox.get("RoleBinding", f"berth-access-{grant.pk}", namespace.name)


def test_the_watcher_ends_a_grant_at_its_time(transactional_db, gitops_world, sandbox, namespace):
    """No job run by hand: the watcher knows the grant's end from its plan."""
    grant = granted(gitops_world, namespace, role="viewer", duration="15m")
    assert sam_may(sandbox, "list", "pods", namespace.name)
    with time_machine.travel(timezone.now(), tick=True) as clock, watcher():
        synced(gitops_world["cluster"])
        clock.move_to(grant.expires_at + timedelta(seconds=1))
        eventually(lambda: binding_of(sandbox, grant, namespace) is None, "binding gone")
        eventually(
            lambda: AccessGrant.objects.filter(pk=grant.pk, ended_at__isnull=False).exists(),
            "the grant's end recorded",
        )
    assert not sam_may(sandbox, "list", "pods", namespace.name)


def test_the_watcher_removes_a_binding_made_again_by_hand_after_the_end(
    transactional_db, gitops_world, sandbox, namespace
):
    grant = granted(gitops_world, namespace)
    kept = binding_of(sandbox, grant, namespace)
    with time_machine.travel(grant.expires_at + timedelta(seconds=1), tick=True):
        sweep_namespace(namespace)
        assert binding_of(sandbox, grant, namespace) is None
        with watcher():
            synced(gitops_world["cluster"])
            kept["metadata"] = {
                key: kept["metadata"][key] for key in ("name", "namespace", "labels")
            }
            path = f"/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace.name}/rolebindings"
            # Through the API, Berth's admission policy refuses Berth's labels to anyone else.
            with pytest.raises(requests.HTTPError, match="403"):
                as_admin(sandbox, "POST", path, kept)
            sandbox.upsert(kept)  # past the API (a break-glass restore of the saved YAML)
            eventually(lambda: binding_of(sandbox, grant, namespace) is None, "binding gone")
    assert not sam_may(sandbox, "create", "deployments", namespace.name)
    removed = AuditEvent.objects.filter(action="namespace.reconciled").last()
    assert removed.after["changes"][0]["object"].endswith(f"berth-access-{grant.pk}")


def test_revoked_the_binding_goes_at_once(
    gitops_world, sandbox, namespace, eager_tasks, django_capture_on_commit_callbacks
):
    grant = granted(gitops_world, namespace)
    with django_capture_on_commit_callbacks(execute=True):
        services.revoke_grant(grant_id=grant.pk, actor=gitops_world["owner"])
    assert sandbox.get("RoleBinding", f"berth-access-{grant.pk}", namespace.name) is None
    assert not sam_may(sandbox, "create", "deployments", namespace.name)
    grant.refresh_from_db()
    assert grant.state == "revoked" and grant.ended_at is not None


def test_the_sweep_removes_a_binding_made_again_by_hand_after_the_end(
    gitops_world, sandbox, namespace
):
    grant = granted(gitops_world, namespace)
    kept = binding_of(sandbox, grant, namespace)
    with time_machine.travel(grant.expires_at + timedelta(seconds=1)):
        sweep_namespace(namespace)
        assert binding_of(sandbox, grant, namespace) is None
        sandbox.upsert(kept)  # someone kept the YAML
        assert sam_may(sandbox, "create", "deployments", namespace.name)
        found = sweep_namespace(namespace)
    assert [(f["status"], f.get("deleted")) for f in found] == [("unexpected", True)]
    assert binding_of(sandbox, grant, namespace) is None


def test_a_role_the_tier_does_not_offer_is_refused(gitops_world, sandbox, namespace):
    with pytest.raises(InvalidInput, match="offers owner, member, viewer"):
        services.request_access(
            person=User.objects.get(username="sam"),
            namespace=namespace.name,
            role="cluster-admin",
            duration="1h",
            reason="because",
        )
    assert not AccessGrant.objects.exists()


def test_the_queue_holds_a_grants_end_and_its_drain_removes_the_binding(
    gitops_world, sandbox, namespace, django_capture_on_commit_callbacks
):
    """Where no watcher runs, the grant's key waits in the queue for its end: the drain the
    queue's delayed message starts then removes the binding (before it, nothing)."""
    with django_capture_on_commit_callbacks(execute=True):  # as the transactions commit
        grant = granted(gitops_world, namespace)
    queued = QueuedKey.objects.get(key=f"grant:sandbox/{grant.pk}")
    assert abs(queued.not_before - grant.expires_at) < timedelta(seconds=1)
    assert door.drain(worker="early") == {}
    assert binding_of(sandbox, grant, namespace) is not None
    with time_machine.travel(grant.expires_at + timedelta(seconds=1)):
        drained = door.drain(worker="on-time")
        grant.refresh_from_db()
        assert grant.state == "expired" and grant.ended_at is not None
    assert [str(key) for key in drained] == [f"grant:sandbox/{grant.pk}"]
    assert binding_of(sandbox, grant, namespace) is None
    assert not QueuedKey.objects.filter(key=f"grant:sandbox/{grant.pk}").exists()


def test_a_decommissioned_namespace_ends_its_grants(gitops_world, sandbox, namespace):
    grant = granted(gitops_world, namespace)
    approve_if_needed(
        services.submit_request(
            tenant=gitops_world["tenant"],
            kind="decommission",
            payload={"namespace": namespace.name, "reason": "done"},
            requester=gitops_world["owner"],
        ),
        approver=gitops_world["admin"],
    )
    work()
    grant.refresh_from_db()
    assert grant.state == "expired" and grant.ended_at is not None
    assert not AccessGrant.objects.live().exists()
    ended = AuditEvent.objects.get(action="access.ended")
    assert ended.after["why"] == "namespace removed"


def test_a_grant_never_outlasts_its_tiers_role(gitops_world, sandbox, namespace):
    """Its tier narrowed behind the admin site's back (no revocation yet): the next
    reconcile of the namespace removes the binding all the same."""
    grant = granted(gitops_world, namespace)
    EnvironmentTier.objects.filter(pk=namespace.tier_id).update(
        member_cluster_role="berth-tenant-view"
    )
    sweep_namespace(namespace)
    assert binding_of(sandbox, grant, namespace) is None
    assert not sam_may(sandbox, "create", "deployments", namespace.name)


def test_the_truth_table_and_a_repair_keep_a_live_grant_and_leave_an_ended_one_gone(
    gitops_world, sandbox, namespace
):
    """Where grants meet the periodic jobs: the truth table counts a live grant's binding as
    Berth's and in sync; a repair (a tenant_sync through the request path) while it lasts
    puts back a binding edited by hand, and one after its end does not bring it back."""
    grant = granted(gitops_world, namespace)
    rows = provisioner.take_truth(gitops_world["tenant"])["rows"]
    [row] = [r for r in rows if r["object"].endswith(f"berth-access-{grant.pk}")]
    assert row["state"] == "in_sync"

    edited = binding_of(sandbox, grant, namespace)
    edited["subjects"][0]["name"] = "oidc:someone-else"
    sandbox.upsert(edited)  # past the API: its admission policy refuses edits of Berth's
    repair = services.repair_truth(tenant=gitops_world["tenant"], actor=gitops_world["admin"])
    for made in repair:
        approve_if_needed(made, approver=gitops_world["admin"])
    work()
    assert binding_of(sandbox, grant, namespace)["subjects"][0]["name"] == SAM

    with time_machine.travel(grant.expires_at + timedelta(seconds=1)):
        sweep_namespace(namespace)
        for made in services.repair_truth(
            tenant=gitops_world["tenant"], actor=gitops_world["admin"]
        ):
            approve_if_needed(made, approver=gitops_world["admin"])
        work()
        assert binding_of(sandbox, grant, namespace) is None
