"""Guardrails in the running system: validate before create, moving bindings to Berth's
roles, installing the guardrails on a cluster, and the tenant page saying who may do what."""

import pytest

from provisioning import bootstrap, jobs, reconcile
from provisioning.plan import MANAGED_BY, Plan
from provisioning.reconcile import runs
from tenants import demo, services
from tenants.choices import NamespaceState, RequestState, RunState
from tenants.models import AuditEvent, Cluster, Namespace, Request
from tests.support.cluster import berth_identity, stand_in
from tests.support.factories import UserFactory
from tests.support.gitserver import commits_on
from tests.support.prov_world import demo_world
from tests.support.workflow import approve_if_needed

WORKER = "guardrails-test"
WRITES = {"POST", "PUT", "PATCH", "DELETE"}


@pytest.fixture
def sandbox():
    with stand_in(termination_seconds=0.2) as running:
        yield running


@pytest.fixture
def local_repository_world(db, sandbox, tmp_path, settings):
    settings.BERTH_GIT_MAX_ATTEMPTS = 2
    settings.BERTH_GIT_BACKOFF_SECONDS = 0.01
    # Berth signs in as its own ServiceAccount, with exactly the chart's RBAC.
    bare = tmp_path / "payments.git"
    return {
        **demo_world(sandbox, gitops_repo_url=demo.ensure_git_repo(bare)),
        "cluster": Cluster.objects.get(name="sandbox"),
        "bare": bare,
    }


def approved(local_repository_world, **payload) -> Request:
    payload = payload or {
        "app": "shop",
        "tier": "dev",
        "cluster": "sandbox",
        "cpu": "1",
        "memory": "2Gi",
    }
    submitted = services.submit_request(
        tenant=local_repository_world["tenant"],
        kind="namespace",
        payload=payload,
        requester=local_repository_world["developer"],
    )
    return approve_if_needed(submitted, approver=local_repository_world["admin"])


def converge(tenancy_request: Request) -> Request:
    reconcile.converge(request_id=tenancy_request.pk, worker=WORKER)
    tenancy_request.refresh_from_db()
    return tenancy_request


def inject(monkeypatch, obj: dict) -> None:
    """Every plan the engine renders gets one more object."""
    render = runs.render

    def with_extra(inputs):
        plan = render(inputs)
        return Plan(apply=(*plan.apply, obj), delete=plan.delete)

    monkeypatch.setattr(runs, "render", with_extra)


LABELS = {MANAGED_BY: "berth", "berth.dev/tenant": "payments"}
INVALID = {  # a quantity must be a string: the API server would refuse it (422)
    "apiVersion": "v1",
    "kind": "ResourceQuota",
    "metadata": {"name": "extra", "namespace": "payments-shop-dev", "labels": LABELS},
    "spec": {"hard": {"requests.cpu": 2}},
}
ESCALATION = {
    "apiVersion": "rbac.authorization.k8s.io/v1",
    "kind": "ClusterRoleBinding",
    "metadata": {"name": "payments-everything", "labels": LABELS},
    "roleRef": {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": "cluster-admin",
    },
    "subjects": [
        {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "payments-devs"}
    ],
}


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        pytest.param(
            INVALID,
            'ResourceQuota/payments-shop-dev/extra: schema: spec.hard["requests'
            '.cpu"]: expected string',
            id="schema-invalid-object",
        ),
        pytest.param(
            ESCALATION,
            "ClusterRoleBinding/payments-everything: a tenant's plan never "
            "holds a ClusterRoleBinding",
            id="cluster-role-binding",
        ),
    ],
)
def test_a_plan_that_fails_validation_creates_nothing_anywhere(
    local_repository_world, sandbox, monkeypatch, bad, reason
):
    inject(monkeypatch, bad)
    commits_before = commits_on(local_repository_world["bare"])
    sandbox.clear_requests()

    tenancy_request = converge(approved(local_repository_world))

    assert tenancy_request.state == RequestState.FAILED
    assert reason in tenancy_request.status_message
    assert "nothing was applied" in tenancy_request.status_message
    # Not one write reached the API server: no namespace, nothing.
    assert [r for r in sandbox.requests() if r["method"] in WRITES] == []
    assert sandbox.get("Namespace", "payments-shop-dev") is None
    # No commit either, and no namespace is recorded as being provisioned.
    assert commits_on(local_repository_world["bare"]) == commits_before
    assert not Namespace.objects.filter(
        name="payments-shop-dev", state__in=[NamespaceState.PENDING, NamespaceState.ACTIVE]
    ).exists()
    run = tenancy_request.runs.get()
    assert run.state == RunState.FAILED
    (failed,) = [step for step in run.steps if step["outcome"] == "failed"]
    assert failed["object"] == reason.split(":")[0]
    assert {step["outcome"] for step in run.steps} == {"pending", "failed"}


def shop_dev_role_binding(sandbox, name: str) -> dict:
    return sandbox.get(
        "RoleBinding", name, "payments-shop-dev", api_version="rbac.authorization.k8s.io/v1"
    )


def test_a_valid_plan_still_provisions_and_commits(local_repository_world, sandbox):
    tenancy_request = converge(approved(local_repository_world))

    assert tenancy_request.state == RequestState.READY, tenancy_request.status_message
    binding = shop_dev_role_binding(sandbox, "berth-gitops")
    assert binding["roleRef"]["name"] == "berth-tenant-edit"
    assert tenancy_request.runs.get().steps[-1]["outcome"] == "committed"


def test_a_binding_whose_role_changed_is_recreated(local_repository_world, sandbox):
    """roleRef is immutable: an existing binding to `edit` (before Berth's roles) is deleted
    and created again, by reconcile as by provisioning."""
    converge(approved(local_repository_world))
    live = shop_dev_role_binding(sandbox, "berth-members")
    live["roleRef"]["name"] = "edit"
    sandbox.upsert(live)
    sandbox.clear_requests()

    jobs.sweep_namespace(Namespace.objects.get(name="payments-shop-dev"))

    now = shop_dev_role_binding(sandbox, "berth-members")
    assert now["roleRef"]["name"] == "berth-tenant-edit"
    writes = [
        (r["method"], r["path"].rsplit("/", 1)[-1])
        for r in sandbox.requests()
        if r["method"] in WRITES
    ]
    # One apply, refused as the API refuses a new roleRef; then delete and apply again.
    assert writes == [
        ("PATCH", "berth-members"),
        ("DELETE", "berth-members"),
        ("PATCH", "berth-members"),
    ]


# --- cluster bootstrap -------------------------------------------------------------------


def test_install_guardrails_applies_roles_and_policies_once(local_repository_world, sandbox):
    installed = bootstrap.install_guardrails(
        cluster=local_repository_world["cluster"], actor=local_repository_world["admin"]
    )

    assert installed.identity == berth_identity()  # asked of the API server (whoami)
    outcomes = dict(installed.outcomes)
    assert outcomes.pop("Namespace/berth-system") == "configured"  # Berth's own, already there
    assert set(outcomes.values()) == {"created"}
    role = sandbox.get(
        "ClusterRole", "berth-tenant-edit", api_version="rbac.authorization.k8s.io/v1"
    )
    assert role["metadata"]["labels"][MANAGED_BY] == "berth"
    policy = sandbox.get(
        "ValidatingAdmissionPolicy",
        "berth-protect-managed",
        api_version="admissionregistration.k8s.io/v1",
    )
    assert (
        "system:serviceaccount:berth-system:berth"
        in (policy["spec"]["validations"][0]["expression"])
    )
    event = AuditEvent.objects.get(action="install_guardrails")
    assert event.actor == local_repository_world["admin"] and event.object_repr == "sandbox"

    again = bootstrap.install_guardrails(
        cluster=local_repository_world["cluster"], actor=local_repository_world["admin"]
    )
    assert set(dict(again.outcomes).values()) == {"unchanged"}


def test_install_guardrails_refuses_when_berth_is_someone_else_there(
    local_repository_world, monkeypatch
):
    monkeypatch.setattr(bootstrap, "whoami", lambda client: "kubernetes-admin")
    with pytest.raises(bootstrap.BootstrapError, match="would lock Berth out"):
        bootstrap.install_guardrails(cluster=local_repository_world["cluster"])


def test_install_guardrails_applies_nothing_to_a_plan_only_cluster(local_repository_world, sandbox):
    Cluster.objects.filter(pk=local_repository_world["cluster"].pk).update(plan_only=True)
    sandbox.clear_requests()
    with pytest.raises(bootstrap.BootstrapError, match="plan-only"):
        bootstrap.install_guardrails(
            cluster=Cluster.objects.get(pk=local_repository_world["cluster"].pk)
        )
    assert sandbox.requests() == []


def test_the_admin_action_installs_guardrails(client, local_repository_world, sandbox, monkeypatch):
    from provisioning import tasks

    queued = []
    monkeypatch.setattr(tasks.install_guardrails, "delay", lambda *args: queued.append(args))
    root = UserFactory(username="root", is_staff=True, is_superuser=True)
    client.force_login(root)
    response = client.post(
        "/admin/tenants/cluster/",
        {
            "action": "install_guardrails",
            "_selected_action": [local_repository_world["cluster"].pk],
            "index": "0",
        },
        follow=True,
    )
    assert "guardrail install queued" in response.content.decode()
    assert "guardrail objects applied" in tasks.install_guardrails(*queued[0])  # the worker
    assert (
        sandbox.get("ClusterRole", "berth-tenant-view", api_version="rbac.authorization.k8s.io/v1")
        is not None
    )


# --- the tenant page ---------------------------------------------------------------------


def test_the_tenant_page_says_who_may_do_what_per_tier(client, local_repository_world):
    client.force_login(local_repository_world["developer"])
    page = client.get("/tenants/payments/").content.decode()

    assert "Permissions in the cluster" in page
    section = page.split('id="permissions"')[1].split("</section>")[0]
    # One row group per role; in it, a row per set of tiers that give the same rights.
    members = next(group for group in section.split("<tbody>") if "Members" in group)
    assert "payments-devs" in members
    rows = members.split("<tr>")[1:]
    prod = next(row for row in rows if "<code>prod</code>" in row)
    dev = next(row for row in rows if "<code>dev</code>" in row)
    assert "Read everything except Secrets; change nothing." in prod
    assert "Deploy and change workloads" in dev
    gitops = next(group for group in section.split("<tbody>") if "GitOps (berth-gitops)" in group)
    assert "every tier" in gitops and "Deploy and change workloads" in gitops
    only = section.split('id="gitops-only"')[1].split("</p>")[0]
    assert "Only GitOps deploys in" in section
    assert ">prod</code>" in only and ">dev</code>" not in only
