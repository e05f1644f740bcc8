"""Guardrails are verified by what they say, not only by their stamp (issue #49): a binding
switched from Deny to Audit by hand, its labels and digest annotation kept, fences nothing,
so no tenant namespace goes onto that cluster until the guardrails are installed again; the
request waits saying which object changed where, the dashboard says so, and the audit log
holds one event for it."""

from __future__ import annotations

import pytest
from kubernetes import client as k8s
from kubernetes import config as k8s_config

from provisioning import tasks
from provisioning.guardrails.stamp import ANNOTATION
from provisioning.plan import MANAGED_BY
from provisioning.reconcile.guardrails import forget_checks, guardrails_problem
from tenants.choices import GuardrailsMode, RequestState
from tenants.models import AuditEvent, Cluster
from tests.support.cluster import as_admin
from tests.support.factories import UserFactory
from tests.support.gitops_loop import ask_for_web, wake, work

# The GitOps loop's world (tests/support/gitops_loop.py) applies Argo CD's and Kargo's
# objects: with the upstream CRDs only (they skip, saying why, without them).
pytestmark = pytest.mark.crds

NAME = "payments-web-dev"
BINDING = "berth-protect-managed"
WEAKENED = f"ValidatingAdmissionPolicyBinding/{BINDING}: changed (spec.validationActions[0])"


@pytest.fixture
def fenced(gitops_world):
    """The demo's sandbox with Berth's guardrails installed by the worker's job."""
    Cluster.objects.filter(name="sandbox").update(guardrails=GuardrailsMode.BERTH)
    outcome = tasks.install_guardrails(Cluster.objects.get(name="sandbox").pk)
    assert "guardrail objects applied" in outcome
    return gitops_world


def sandbox_cluster() -> Cluster:
    return Cluster.objects.get(name="sandbox")


def admission_api(sandbox) -> k8s.AdmissionregistrationV1Api:
    """The official client as the cluster's admin (someone changing things by hand)."""
    return k8s.AdmissionregistrationV1Api(
        k8s_config.new_client_from_config_dict(sandbox.kubeconfig())
    )


def weaken_binding(sandbox) -> None:
    """Deny becomes Audit on the protect policy's binding; its labels and stamp stay."""
    api = admission_api(sandbox)
    before = api.read_validating_admission_policy_binding(BINDING)
    api.patch_validating_admission_policy_binding(
        BINDING,
        {"spec": {"validationActions": ["Audit"]}},
        _content_type="application/merge-patch+json",
    )
    after = api.read_validating_admission_policy_binding(BINDING)
    assert after.spec.validation_actions == ["Audit"]
    assert after.metadata.labels == before.metadata.labels
    assert after.metadata.labels[MANAGED_BY] == "berth"
    assert after.metadata.annotations[ANNOTATION] == before.metadata.annotations[ANNOTATION]
    forget_checks(sandbox_cluster())


def guardrail_events(action: str) -> list[AuditEvent]:
    return list(
        AuditEvent.objects.filter(
            action=action, object_type="tenants.cluster", object_id=str(sandbox_cluster().pk)
        )
    )


def test_an_untouched_install_is_verified_with_no_problem_and_no_event(fenced):
    forget_checks(sandbox_cluster())
    assert guardrails_problem(sandbox_cluster()) == ""
    assert not AuditEvent.objects.filter(action__startswith="guardrails.").exists()


def test_a_binding_switched_from_deny_to_audit_is_named_with_the_field(fenced, sandbox):
    weaken_binding(sandbox)

    problem = guardrails_problem(sandbox_cluster())
    assert problem.startswith("guardrails on sandbox weakened (")
    assert WEAKENED in problem
    assert "re-installs them (admin: Clusters, Install guardrails)" in problem


def test_a_request_waits_for_a_weakened_binding_and_goes_on_once_installed_again(fenced, sandbox):
    weaken_binding(sandbox)
    made = ask_for_web(fenced)
    work()

    made.refresh_from_db()
    assert made.state == RequestState.APPROVED  # waits; not failed, not Ready
    assert made.status_message.startswith("Waiting: guardrails on sandbox weakened (")
    assert WEAKENED in made.status_message
    assert sandbox.get("Namespace", NAME) is None
    # Checked again (the cache forgotten, another request's run): still one event.
    forget_checks(sandbox_cluster())
    assert WEAKENED in guardrails_problem(sandbox_cluster())
    wake(made)
    work()
    (event,) = guardrail_events("guardrails.weakened")
    assert event.actor is None
    assert event.after == {"problems": [WEAKENED]}

    tasks.install_guardrails(sandbox_cluster().pk)
    assert admission_api(sandbox).read_validating_admission_policy_binding(
        BINDING
    ).spec.validation_actions == ["Deny"]
    wake(made)
    work()
    made.refresh_from_db()
    assert made.state == RequestState.READY, made.status_message
    assert sandbox.get("Namespace", NAME) is not None
    assert len(guardrail_events("guardrails.weakened")) == 1


def test_a_deleted_policy_is_reported_missing_once_in_the_audit_log(fenced, sandbox):
    as_admin(
        sandbox,
        "DELETE",
        f"/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/{BINDING}",
    )
    forget_checks(sandbox_cluster())
    made = ask_for_web(fenced)
    work()

    made.refresh_from_db()
    assert made.state == RequestState.APPROVED
    assert f"missing ValidatingAdmissionPolicy {BINDING}" in made.wait_reason
    forget_checks(sandbox_cluster())
    assert f"missing ValidatingAdmissionPolicy {BINDING}" in guardrails_problem(sandbox_cluster())
    (event,) = guardrail_events("guardrails.missing")
    assert event.after == {"problems": [f"missing ValidatingAdmissionPolicy {BINDING}"]}
    assert not guardrail_events("guardrails.weakened")


def test_the_dashboard_and_the_cluster_list_say_which_guardrail_was_weakened(
    fenced, sandbox, client
):
    weaken_binding(sandbox)
    made = ask_for_web(fenced)
    work()
    made.refresh_from_db()
    assert made.state == RequestState.APPROVED

    client.force_login(fenced["admin"])
    dashboard = client.get("/dashboard/").content.decode()
    assert f"sandbox: guardrails weakened ({WEAKENED}); 1 request(s) wait for them" in dashboard, (
        dashboard
    )
    root = UserFactory(username="root", is_staff=True, is_superuser=True)
    client.force_login(root)
    listed = client.get("/admin/tenants/cluster/").content.decode()
    assert f"weakened ({WEAKENED})" in listed

    tasks.install_guardrails(sandbox_cluster().pk)  # installed again: current once more
    listed = client.get("/admin/tenants/cluster/").content.decode()
    assert "current (installed" in listed
    client.force_login(fenced["admin"])
    assert "guardrails weakened" not in client.get("/dashboard/").content.decode()


def test_guardrails_of_another_version_are_outdated_not_weakened(fenced):
    # Kargo leaves the cluster: the policies Berth would install now exempt one user fewer,
    # so every live one differs from them, and is stamped with the digest of the old set.
    Cluster.objects.filter(name="sandbox").update(has_kargo=False)
    forget_checks(sandbox_cluster())

    problem = guardrails_problem(sandbox_cluster())
    assert problem.startswith("guardrails not installed on sandbox")
    assert "from another Berth version" in problem
    assert "weakened" not in problem
    assert not AuditEvent.objects.filter(action__startswith="guardrails.").exists()


# --- the other doors: every change of the cluster passes the same check ------------------


@pytest.fixture
def provisioned(fenced, sandbox, settings):
    """payments-web-dev made on the fenced sandbox; then its guardrails weakened by hand."""
    settings.BERTH_GUARDRAILS_CHECK_SECONDS = 0
    made = ask_for_web(fenced)
    work()
    made.refresh_from_db()
    assert made.state == RequestState.READY, made.status_message
    weaken_binding(sandbox)
    return fenced


def test_a_campaign_wave_on_a_weakened_cluster_waits_and_changes_nothing(provisioned, sandbox):
    from provisioning.jobs import campaigns
    from tenants import services
    from tenants.choices import CampaignState, TargetState
    from tenants.models import CampaignTarget, EnvironmentTier

    EnvironmentTier.objects.filter(slug="dev").update(container_default_memory_mib=768)
    campaign = services.create_campaign(
        actor=provisioned["admin"],
        tier=EnvironmentTier.objects.get(slug="dev"),
        reason="Dev containers default to 768Mi.",
    )
    assert campaigns.roll(campaign.pk) == CampaignState.PAUSED
    target = CampaignTarget.objects.get(campaign=campaign, namespace__name=NAME)
    assert target.state == TargetState.FAILED
    assert target.error.startswith("guardrails on sandbox weakened (")
    limits = as_admin(sandbox, "GET", f"/api/v1/namespaces/{NAME}/limitranges/berth-limits")
    assert limits["spec"]["limits"][0]["default"]["memory"] != "768Mi"
    assert target.namespace.tier_revision_id == target.from_tier_revision_id


def test_a_repair_on_a_weakened_cluster_waits_with_the_reason(provisioned, sandbox):
    from provisioning.reconcile import door
    from provisioning.reconcile.keys import namespace_key
    from provisioning.reconcile.queue import Cause
    from tenants.conditions import Phase, condition
    from tenants.models import Namespace

    quota = sandbox.get("ResourceQuota", "berth-quota", NAME)
    quota["spec"]["hard"]["requests.cpu"] = "64"
    sandbox.upsert(quota)
    key = namespace_key("sandbox", NAME)

    outcome = door.run([key], cause=Cause("repair", actor="pat"), worker="w")[key].outcome

    assert outcome.phase is Phase.WAITING and WEAKENED in outcome.message
    assert sandbox.get("ResourceQuota", "berth-quota", NAME)["spec"]["hard"]["requests.cpu"] == "64"
    waiting = condition(Namespace.objects.get(name=NAME).conditions, "Waiting")
    assert waiting["status"] == "True" and waiting["reason"] == "GuardrailsNotVerified"


def test_no_deploy_token_is_minted_on_a_weakened_cluster(provisioned, sandbox):
    from tenants import services
    from tenants.errors import ClusterUnavailable
    from tenants.models import DeployToken, EnvironmentTier, Namespace, User

    EnvironmentTier.objects.filter(slug="dev").update(deploy_tokens_allowed=True)
    namespace = Namespace.objects.get(name=NAME)
    with pytest.raises(ClusterUnavailable, match="weakened"):
        services.mint_deploy_token(
            user=User.objects.get(username="dev"), namespace=namespace, ttl_minutes=10
        )
    assert not [
        sa
        for sa in as_admin(sandbox, "GET", f"/api/v1/namespaces/{NAME}/serviceaccounts")["items"]
        if sa["metadata"]["name"].startswith("berth-deploy")
    ]
    assert not DeployToken.objects.exists()  # nothing half-made is left behind


def test_the_watcher_finds_a_weakened_binding_as_it_happens(fenced, sandbox, transactional_db):
    """No request needed: the watcher watches Berth's guardrails too, and a binding
    weakened by hand is in the audit log within moments, named with its field."""
    from tests.support.watching import eventually, synced, watcher

    cluster = sandbox_cluster()
    with watcher():
        synced(cluster)
        assert not AuditEvent.objects.filter(action="guardrails.weakened").exists()
        weaken_binding(sandbox)
        event = eventually(
            lambda: AuditEvent.objects.filter(action="guardrails.weakened").first(),
            "the weakened binding recorded",
        )
    assert WEAKENED in event.after["problems"]
