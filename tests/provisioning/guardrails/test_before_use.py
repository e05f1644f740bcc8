"""Guardrails are a versioned, verified part of a cluster: installed by a worker's job that
records their digest, checked before any tenant namespace goes onto the cluster, and a
request for a cluster without current ones waits, saying why, until they are there."""

from __future__ import annotations

import pytest

from provisioning import tasks
from provisioning.reconcile import guardrails as checks
from tenants.choices import GuardrailsMode, RequestState
from tenants.models import AuditEvent, Cluster
from tests.support.cluster import as_admin
from tests.support.factories import UserFactory
from tests.support.gitops_loop import ask_for_web, wake, work

# The GitOps loop's world (tests/support/gitops_loop.py) applies Argo CD's and Kargo's
# objects: with the upstream CRDs only (they skip, saying why, without them).
pytestmark = pytest.mark.crds

NAME = "payments-web-dev"


@pytest.fixture
def unfenced(gitops_world, settings):
    """The demo's sandbox as a cluster whose guardrails are Berth's to install, not yet
    installed; every check reads the cluster afresh."""
    settings.BERTH_GUARDRAILS_CHECK_SECONDS = 0
    Cluster.objects.filter(name="sandbox").update(guardrails=GuardrailsMode.BERTH)
    return gitops_world


def test_a_cluster_without_guardrails_gets_no_tenant_namespace_and_the_request_says_why(
    unfenced, sandbox, client
):
    made = ask_for_web(unfenced)
    work()

    made.refresh_from_db()
    assert made.state == RequestState.APPROVED  # waits; not failed, nothing lost
    assert made.wait_reason.startswith("guardrails not installed on sandbox")
    assert "ValidatingAdmissionPolicy berth-protect-managed" in made.wait_reason
    assert sandbox.get("Namespace", NAME) is None
    client.force_login(unfenced["admin"])
    dashboard = client.get("/dashboard/").content.decode()
    assert "sandbox: guardrails not installed; 1 request(s) wait for them" in dashboard
    page = client.get(f"/requests/{made.pk}/").content.decode()
    assert "guardrails not installed on sandbox" in page


def test_the_install_job_records_the_version_and_the_waiting_request_goes_on(unfenced, sandbox):
    made = ask_for_web(unfenced)
    work()
    assert sandbox.get("Namespace", NAME) is None

    outcome = tasks.install_guardrails(Cluster.objects.get(name="sandbox").pk, unfenced["admin"].pk)
    assert "guardrail objects applied" in outcome
    cluster = Cluster.objects.get(name="sandbox")
    assert cluster.guardrails_digest == checks.expected_digest(cluster)
    assert cluster.guardrails_installed_at is not None
    event = AuditEvent.objects.get(action="install_guardrails")
    assert event.after["digest"] == cluster.guardrails_digest
    made.refresh_from_db()
    assert made.next_try_at is None  # woken: the sweep hands it out now

    wake(made)
    work()
    made.refresh_from_db()
    assert made.state == RequestState.READY
    assert made.wait_reason == ""
    assert sandbox.get("Namespace", NAME) is not None


def test_guardrails_from_another_version_hold_requests_back_until_installed_again(
    unfenced, sandbox
):
    tasks.install_guardrails(Cluster.objects.get(name="sandbox").pk)
    # Kargo leaves the cluster: its controller is no longer exempt, so the policies Berth
    # would install now differ from those the cluster holds.
    assert Cluster.objects.get(name="sandbox").has_kargo
    Cluster.objects.filter(name="sandbox").update(has_kargo=False)
    made = ask_for_web(unfenced)
    work()

    made.refresh_from_db()
    assert made.state == RequestState.APPROVED
    assert "from another Berth version" in made.wait_reason
    assert "ValidatingAdmissionPolicy berth-protect-managed" in made.wait_reason

    tasks.install_guardrails(Cluster.objects.get(name="sandbox").pk)
    wake(made)
    work()
    made.refresh_from_db()
    assert made.state == RequestState.READY


def test_a_policy_deleted_by_hand_is_missed_before_the_next_namespace(unfenced, sandbox):
    tasks.install_guardrails(Cluster.objects.get(name="sandbox").pk)
    as_admin(
        sandbox,
        "DELETE",
        "/apis/admissionregistration.k8s.io/v1/"
        "validatingadmissionpolicybindings/berth-protect-managed",
    )
    made = ask_for_web(unfenced)
    work()

    made.refresh_from_db()
    assert made.state == RequestState.APPROVED
    assert "missing ValidatingAdmissionPolicyBinding berth-protect-managed" in made.wait_reason
    assert sandbox.get("Namespace", NAME) is None


def test_a_cluster_fenced_by_the_platforms_own_admission_is_not_checked(gitops_world, sandbox):
    assert Cluster.objects.get(name="sandbox").guardrails == GuardrailsMode.EXTERNAL
    made = ask_for_web(gitops_world)
    work()
    made.refresh_from_db()
    assert made.state == RequestState.READY


def test_the_admin_action_queues_the_install_and_the_list_says_where_they_stand(
    unfenced, client, monkeypatch
):
    queued = []
    monkeypatch.setattr(tasks.install_guardrails, "delay", lambda *args: queued.append(args))
    root = UserFactory(username="root", is_staff=True, is_superuser=True)
    client.force_login(root)
    cluster = Cluster.objects.get(name="sandbox")

    listed = client.get("/admin/tenants/cluster/").content.decode()
    assert "not installed" in listed
    response = client.post(
        "/admin/tenants/cluster/",
        {
            "action": "install_guardrails",
            "_selected_action": [cluster.pk],
            "index": "0",
        },
        follow=True,
    )
    assert "guardrail install queued" in response.content.decode()
    assert queued == [(cluster.pk, root.pk)]

    tasks.install_guardrails(*queued[0])  # what the worker does with it
    listed = client.get("/admin/tenants/cluster/").content.decode()
    assert "current (installed" in listed


def test_the_cluster_page_shows_what_an_install_would_change_before_it_is_decided(unfenced, client):
    root = UserFactory(username="root", is_staff=True, is_superuser=True)
    client.force_login(root)
    cluster = Cluster.objects.get(name="sandbox")
    page = client.get(f"/admin/tenants/cluster/{cluster.pk}/change/").content.decode()
    assert "+++ b/ValidatingAdmissionPolicy/berth-protect-managed" in page  # all new

    tasks.install_guardrails(cluster.pk)
    page = client.get(f"/admin/tenants/cluster/{cluster.pk}/change/").content.decode()
    assert "Nothing: the guardrails there are current." in page

    Cluster.objects.filter(pk=cluster.pk).update(has_kargo=False)  # the exempt users change
    page = client.get(f"/admin/tenants/cluster/{cluster.pk}/change/").content.decode()
    assert "kargo-management-controller" in page and "--- a/ValidatingAdmissionPolicy" in page


def test_a_cluster_that_does_not_answer_is_an_outage_not_a_wait_for_guardrails(unfenced):
    from tests.support.gitserver import free_port

    Cluster.objects.filter(name="sandbox").update(api_url=f"https://127.0.0.1:{free_port()}")
    made = ask_for_web(unfenced)
    work()
    made.refresh_from_db()
    # As any outage (the tests give up waiting at once): failed, saying the cluster is
    # unreachable; nothing was applied anywhere.
    assert made.state == RequestState.FAILED
    assert "unreachable" in made.status_message
    assert not made.wait_reason.startswith("guardrails")
