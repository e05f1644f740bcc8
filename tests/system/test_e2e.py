"""End to end, against an API server: a request becomes objects Berth owns, applying again
changes nothing, the fences hold against the team itself, drift is found and repaired, and
decommission leaves nothing behind.

Each test runs against the stand-in and, when `BERTH_E2E_KUBECONFIG` is set, against that
real cluster too (tests/support/e2e.py); Berth acts as its ServiceAccount with the chart's RBAC.
"""

from __future__ import annotations

import copy
import secrets
from collections.abc import Iterator

import pytest

from provisioning import bootstrap, jobs, reconcile
from provisioning.guardrails.admission import PROTECT_POLICY
from provisioning.plan import GITOPS_SERVICE_ACCOUNT, MANAGED_BY, ref_of
from provisioning.records import applied_objects
from tenants import demo, services
from tenants.choices import GuardrailsMode, NamespaceState, RequestState
from tenants.models import Cluster, Namespace, Request
from tests.support.authz import RBAC_GROUP, Subject, path_of
from tests.support.e2e import TARGETS, Target, target
from tests.support.guardrails import web_deployment
from tests.support.prov_world import demo_people
from tests.support.workflow import approve_if_needed

WORKER = "e2e"
RBAC = f"{RBAC_GROUP}/v1"


@pytest.fixture(scope="module", params=TARGETS)
def cluster_target(request, tmp_path_factory) -> Iterator[Target]:
    with target(request.param, tmp_path_factory.mktemp("e2e")) as running:
        yield running


@pytest.fixture
def e2e_world(db, cluster_target: Target):
    token = cluster_target.sign_in_berth()
    demo.seed(
        sandbox_api_url=cluster_target.url, sandbox_token=token, sandbox_ca=cluster_target.ca_pem
    )
    # Fenced as the platform's own: these tests change Berth's objects by hand as the
    # cluster's admin, which Berth's guardrails would refuse (the fences test installs them).
    Cluster.objects.filter(name="sandbox").update(
        is_sandbox=not cluster_target.is_real, guardrails=GuardrailsMode.EXTERNAL
    )
    # A fresh app per test: on a real cluster an ended test's namespaces are still
    # terminating when the next one starts.
    app = f"e2e{secrets.token_hex(3)}"
    return {
        "target": cluster_target,
        **demo_people(),
        "cluster": Cluster.objects.get(name="sandbox"),
        "app": app,
        "namespace": f"payments-{app}-dev",
    }


def converge(e2e_world, kind: str = "namespace", **payload) -> Request:
    payload = payload or {
        "app": e2e_world["app"],
        "tier": "dev",
        "cluster": "sandbox",
        "cpu": "1",
        "memory": "2Gi",
    }
    submitted = services.submit_request(
        tenant=e2e_world["tenant"], kind=kind, payload=payload, requester=e2e_world["developer"]
    )
    tenancy_request = approve_if_needed(submitted, approver=e2e_world["admin"])
    reconcile.converge(request_id=tenancy_request.pk, worker=WORKER)
    tenancy_request.refresh_from_db()
    return tenancy_request


def holds(live: object, desired: object) -> bool:
    """`live` holds everything `desired` says (an API server adds defaults of its own)."""
    if isinstance(desired, dict):
        return isinstance(live, dict) and all(
            key in live and holds(live[key], value) for key, value in desired.items()
        )
    return live == desired


def test_a_request_becomes_objects_berth_owns(e2e_world):
    target = e2e_world["target"]
    tenancy_request = converge(e2e_world)

    assert tenancy_request.state == RequestState.READY, tenancy_request.status_message
    plan = reconcile.current_plan(tenancy_request)
    assert {
        "Namespace",
        "ResourceQuota",
        "LimitRange",
        "NetworkPolicy",
        "RoleBinding",
        "ServiceAccount",
    } <= {obj["kind"] for obj in plan.apply}
    for obj in plan.apply:
        live = target.read(obj)
        assert live is not None, f"{obj['kind']}/{obj['metadata']['name']} is not there"
        assert live["metadata"]["labels"][MANAGED_BY] == "berth"
        assert "berth" in {entry["manager"] for entry in live["metadata"]["managedFields"]}
        assert holds(live.get("spec"), obj.get("spec")), obj["kind"]
    namespace = target.read(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": e2e_world["namespace"]}}
    )
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "baseline"
    assert Namespace.objects.get(name=e2e_world["namespace"]).state == NamespaceState.ACTIVE


def test_applying_the_same_plan_again_changes_nothing(e2e_world):
    tenancy_request = converge(e2e_world)
    client = jobs.cluster_client(e2e_world["cluster"])
    plan = reconcile.current_plan(tenancy_request)
    versions = {
        obj["metadata"]["name"] + obj["kind"]: e2e_world["target"].read(obj)["metadata"][
            "resourceVersion"
        ]
        for obj in plan.apply
    }

    # What the run's applies left, as Berth remembered it: the same apply changes nothing.
    keys = [(obj["apiVersion"], str(ref_of(obj))) for obj in plan.apply]
    known = applied_objects.applied_versions(cluster=e2e_world["cluster"], refs=keys)
    outcomes = {
        client.apply(obj, known_version=known[key]).result
        for obj, key in zip(plan.apply, keys, strict=True)
    }

    assert outcomes == {"unchanged"}
    assert {
        obj["metadata"]["name"] + obj["kind"]: e2e_world["target"].read(obj)["metadata"][
            "resourceVersion"
        ]
        for obj in plan.apply
    } == versions


def test_the_fences_hold_against_the_team_itself(e2e_world):
    """Provisioned by the engine and guarded by "Install guardrails", a namespace refuses
    its own team member and its GitOps identity (impersonated, as `kubectl --as` would)
    every way out of the fences, and still lets them deploy."""
    target = e2e_world["target"]
    assert converge(e2e_world).state == RequestState.READY
    bootstrap.install_guardrails(cluster=e2e_world["cluster"], actor=e2e_world["admin"])
    namespace = e2e_world["namespace"]

    def applied(api_version: str, kind: str, name: str, ns: str | None = namespace) -> dict:
        obj = target.read(
            {"apiVersion": api_version, "kind": kind, "metadata": {"name": name, "namespace": ns}}
        )
        assert obj is not None, f"Berth did not apply {kind}/{name}"
        assert obj["metadata"]["labels"][MANAGED_BY] == "berth"
        return obj

    quota = applied("v1", "ResourceQuota", "berth-quota")
    quota["spec"]["hard"]["requests.cpu"] = "64"
    deny = applied("networking.k8s.io/v1", "NetworkPolicy", "berth-default-deny")
    members = applied(RBAC, "RoleBinding", "berth-members")
    members["subjects"].append({"apiGroup": RBAC_GROUP, "kind": "Group", "name": "everyone"})
    project = applied("argoproj.io/v1alpha1", "AppProject", "payments", "argocd")
    project["spec"]["sourceNamespaces"] = ["*"]
    admin_binding = {
        "apiVersion": RBAC,
        "kind": "RoleBinding",
        "metadata": {"name": "mine", "namespace": namespace},
        "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": "cluster-admin"},
        "subjects": [{"apiGroup": RBAC_GROUP, "kind": "Group", "name": "payments-devs"}],
    }
    unbound = {  # no serviceAccountName: kustomize-controller's own (cluster-wide) rights
        "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
        "kind": "Kustomization",
        "metadata": {"name": "mine", "namespace": namespace},
        "spec": {
            "interval": "5m",
            "path": "./",
            "prune": True,
            "sourceRef": {"kind": "GitRepository", "name": "payments"},
        },
    }
    attempts = {
        "raise the quota": ("PUT", path_of(quota), quota),
        "delete the default deny": ("DELETE", path_of(deny), None),
        "widen Berth's RoleBinding": ("PUT", path_of(members), members),
        "widen the AppProject": ("PUT", path_of(project), project),
        "bind cluster-admin": ("POST", path_of(admin_binding, named=False), admin_binding),
        "Kustomization without serviceAccountName": (
            "POST",
            path_of(unbound, named=False),
            unbound,
        ),
    }
    web = web_deployment(namespace)
    member = Subject.user("dana", *demo.TENANTS[0]["member_groups"])
    gitops = Subject.service_account(namespace, GITOPS_SERVICE_ACCOUNT)
    for who in (member, gitops):
        outcomes = {what: target.attempt(who, *call) for what, call in attempts.items()}
        assert {what: verdict for what, (verdict, _) in outcomes.items()} == {
            "raise the quota": "RBAC",
            # RBAC lets a team manage its own NetworkPolicies; admission tells Berth's apart.
            "delete the default deny": "admission",
            "widen Berth's RoleBinding": "RBAC",
            "widen the AppProject": "RBAC",
            "bind cluster-admin": "RBAC",
            "Kustomization without serviceAccountName": "RBAC",
        }, f"as {who}: {outcomes}"
        assert (
            "only Berth creates, changes or deletes it" in (outcomes["delete the default deny"][1])
        )
        # The fences are not a wall: the team still ships.
        assert target.attempt(who, "POST", path_of(web, named=False), web) == ("allowed", "")


def test_drift_behind_berths_back_is_found_and_repaired(e2e_world):
    target = e2e_world["target"]
    converge(e2e_world)
    quota_ref = {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": "berth-quota", "namespace": e2e_world["namespace"]},
    }
    desired = copy.deepcopy(target.read(quota_ref)["spec"]["hard"])
    changed = target.read(quota_ref)
    changed["spec"]["hard"]["requests.cpu"] = "64"
    # The cluster's admin, by hand, with Berth's guardrails switched off (with them on,
    # admission refuses even cluster-admin; an earlier test may have installed them).
    target.call(
        "DELETE",
        f"/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings/{PROTECT_POLICY}",
    )
    target.write(changed, refused_for=10)  # a real server's policy cache lags a second

    findings = jobs.sweep_namespace(Namespace.objects.get(name=e2e_world["namespace"]))

    assert {(f["object"], f["status"]) for f in findings} == {
        (f"ResourceQuota/{e2e_world['namespace']}/berth-quota", "changed")
    }
    # The dev tier repairs drift: the quota is what was approved again.
    assert target.read(quota_ref)["spec"]["hard"] == desired


def test_decommission_leaves_nothing_behind(e2e_world):
    target = e2e_world["target"]
    created = converge(e2e_world)
    decommission = converge(
        e2e_world, kind="decommission", namespace=e2e_world["namespace"], reason="project cancelled"
    )

    assert decommission.state == RequestState.READY, decommission.status_message
    created.refresh_from_db()
    assert created.state == RequestState.DECOMMISSIONED
    assert target.gone(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": e2e_world["namespace"]}},
        within=120,
    )
    assert Namespace.objects.get(name=e2e_world["namespace"]).state == (
        NamespaceState.DECOMMISSIONED
    )
