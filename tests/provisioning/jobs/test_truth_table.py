"""The truth table, end to end: database ↔ repository ↔ cluster, object by object.

Three projects of the demo tenant `payments` are provisioned on the Kubernetes API stand-in
(Argo CD, Argo CD + Kargo, Flux) with their files on the git server; then someone changes a
quota by hand, deletes a file Berth committed and creates an object with Berth's labels,
and the table reports each of them — and nothing else — until a repair puts the first two
back through a tenant_sync request.
"""

from __future__ import annotations

import pytest

from tenants import provisioner
from tenants.models import Request, TruthTable
from tests.support.cluster import as_admin
from tests.support.drift import QUOTA, delete_file, hand_edit_quota, orphan_config_map
from tests.support.gitops_loop import work
from tests.support.gitserver import files_on


def by_state(table: dict) -> dict[str, list[dict]]:
    found: dict[str, list[dict]] = {}
    for row in table["rows"]:
        found.setdefault(row["state"], []).append(row)
    return found


def first_managed_file(files: dict[str, str], app: str) -> str:
    """The first of the app's files that Berth wrote (and heads as its own)."""
    return sorted(
        path
        for path, content in files.items()
        if path.startswith(f"apps/{app}/") and content.startswith("# Managed by Berth")
    )[0]


def test_after_provisioning_everything_is_in_sync(provisioned):
    table = provisioner.take_truth(provisioned["tenant"])
    states = by_state(table)
    assert set(states) == {"in_sync"}, {
        s: [r["object"] for r in rows] for s, rows in states.items() if s != "in_sync"
    }
    assert table["problems"] == []
    sources = {row["source"] for row in table["rows"]}
    assert sources == {"cluster", "git"}
    paths = {row["object"] for row in table["rows"] if row["source"] == "git"}
    assert "apps/shop/dev/application.yaml" in paths or any(
        p.startswith("apps/shop/") for p in paths
    )
    recorded = TruthTable.objects.get(tenant=provisioned["tenant"])
    assert recorded.counts["in_sync"] == len(table["rows"])
    assert recorded.counts["drifted"] == 0


def test_a_hand_edit_a_deleted_file_and_an_orphan_are_each_reported(provisioned, sandbox, tmp_path):
    before = files_on(provisioned["bare"])
    deleted = first_managed_file(before, "shop")
    hand_edit_quota(sandbox)
    delete_file(provisioned, tmp_path, deleted)
    orphan_config_map(sandbox)

    states = by_state(provisioner.take_truth(provisioned["tenant"]))
    [drifted] = states["drifted"]
    assert drifted["object"] == "ResourceQuota/payments-shop-dev/berth-quota"
    assert drifted["detail"] == "spec.hard.requests.cpu"
    [missing] = states["missing_in_git"]
    assert missing["object"] == deleted
    [orphan] = states["orphan"]
    assert orphan["object"] == "ConfigMap/payments-shop-dev/left-behind"
    assert "missing_in_cluster" not in states


def test_repair_puts_the_quota_and_the_file_back_through_a_request(provisioned, sandbox, tmp_path):
    from tenants import services
    from tests.support.workflow import approve_if_needed

    before = files_on(provisioned["bare"])
    deleted = first_managed_file(before, "cart")
    hand_edit_quota(sandbox)
    delete_file(provisioned, tmp_path, deleted)
    provisioner.take_truth(provisioned["tenant"])

    made = services.repair_truth(tenant=provisioned["tenant"], actor=provisioned["admin"])
    assert [r.kind for r in made] == ["tenant_sync"]
    for tenancy_request in made:
        approve_if_needed(tenancy_request, approver=provisioned["admin"])
    work()
    assert all(r.state == "ready" for r in Request.objects.filter(pk__in=[m.pk for m in made]))

    states = by_state(provisioner.take_truth(provisioned["tenant"]))
    assert set(states) == {"in_sync"}, {
        s: [r["object"] for r in rows] for s, rows in states.items() if s != "in_sync"
    }
    after = files_on(provisioned["bare"])[deleted]  # headed by the repair's request now
    assert after.split("\n", 1)[1] == before[deleted].split("\n", 1)[1]
    assert as_admin(sandbox, "GET", QUOTA)["spec"]["hard"]["requests.cpu"] != "64"


@pytest.mark.parametrize(
    ("status", "said"),
    [
        ({"sync": {"status": "Synced"}, "health": {"status": "Healthy"}}, "Synced / Healthy"),
        (
            {"sync": {"status": "OutOfSync"}, "health": {"status": "Degraded"}},
            "OutOfSync / Degraded",
        ),
        ({}, "no status reported yet"),
    ],
)
def test_the_root_applications_sync_status_is_read(provisioned, sandbox, status, said):
    path = "/apis/argoproj.io/v1alpha1/namespaces/payments-apps/applications/berth-root"
    root = as_admin(sandbox, "GET", path)
    root["status"] = status
    as_admin(sandbox, "PUT", path, root)  # Argo CD's CRD has no status subresource
    table = provisioner.take_truth(provisioned["tenant"])
    [row] = [r for r in table["rows"] if r["object"].startswith("Application/payments-apps/")]
    assert row["engine"] == said


# --- pages, API, metrics ------------------------------------------------------------------


def test_the_page_refreshes_filters_and_lets_only_admins_repair(provisioned, sandbox, client):
    from django.contrib.auth import get_user_model

    hand_edit_quota(sandbox)
    olivia = get_user_model().objects.get(username="olivia")
    client.force_login(olivia)
    assert "Not taken yet" in client.get("/tenants/payments/truth/").content.decode()
    refreshed = client.post("/tenants/payments/truth/refresh/", follow=True)
    again = client.post("/tenants/payments/truth/refresh/", follow=True).content.decode()
    assert "The table was taken moments ago; refresh again in" in again
    html = refreshed.content.decode()
    assert "disagrees" in html and "ResourceQuota/payments-shop-dev/berth-quota" in html
    assert "spec.hard.requests.cpu" in html and "Repair</button>" not in html
    shop = client.get("/tenants/payments/truth/?namespace=payments-shop-dev").content.decode()
    assert "payments-shop-dev" in shop and "payments-feed-dev" not in shop
    assert "apps/shop/" in shop and "apps/feed/" not in shop
    cart = client.get("/tenants/payments/truth/?project=cart").content.decode()
    assert "payments-cart-kargo" in cart and "payments-shop-dev" not in cart
    assert client.get("/tenants/payments/truth/?namespace=nope").status_code == 404
    assert client.post("/tenants/payments/truth/repair/").status_code == 302
    assert not Request.objects.filter(kind="tenant_sync", requester=olivia).exists()

    client.force_login(provisioned["admin"])
    repaired = client.post("/tenants/payments/truth/repair/", follow=True).content.decode()
    assert "Repair requested: #" in repaired
    assert Request.objects.filter(kind="tenant_sync", requester=provisioned["admin"]).exists()


def test_the_api_answers_the_table_and_keeps_other_tenants_out(provisioned, sandbox):
    from django.contrib.auth import get_user_model

    from tests.support.api import api, assert_problem

    users = get_user_model().objects
    orphan_config_map(sandbox)
    dana = api(users.get(username="dev"), scopes=["read", "request"])
    body = dana.post("/api/v1/tenants/payments/truth/refresh/").json()
    assert body["counts"]["orphan"] == 1 and body["tenant"] == "payments"
    [orphan] = [r for r in body["rows"] if r["state"] == "orphan"]
    assert orphan["object"] == "ConfigMap/payments-shop-dev/left-behind"
    shop = dana.get("/api/v1/tenants/payments/truth/", {"namespace": "payments-shop-dev"}).json()
    assert {r["namespace"] for r in shop["rows"] if r["source"] == "cluster"} == {
        "payments-shop-dev"
    }
    again = dana.post("/api/v1/tenants/payments/truth/refresh/")
    assert again.status_code == 429 and 1 <= int(again["Retry-After"]) <= 10
    assert_problem(dana.get("/api/v1/tenants/payments/truth/", {"namespace": "Bad Name"}), 400)
    assert_problem(dana.post("/api/v1/tenants/payments/truth/repair/"), 403)

    sam = api(users.get(username="sam"), scopes=["read", "request"])
    assert_problem(sam.get("/api/v1/tenants/payments/truth/"), 404)
    assert_problem(sam.post("/api/v1/tenants/payments/truth/refresh/"), 404)

    admin = api(provisioned["admin"])
    made = admin.post("/api/v1/tenants/payments/truth/repair/")
    assert made.status_code == 202 and len(made.json()["requests"]) == 1


def test_the_gauge_counts_each_state_and_the_page_costs_fixed_queries(
    provisioned, sandbox, client, django_assert_max_num_queries
):
    from portal.metrics import StateCollector

    hand_edit_quota(sandbox)
    orphan_config_map(sandbox)
    provisioner.take_truth(provisioned["tenant"])
    [family] = [f for f in StateCollector().collect() if f.name == "berth_truth_objects"]
    figures = {sample.labels["state"]: sample.value for sample in family.samples}
    assert figures["drifted"] == 1 and figures["orphan"] == 1
    assert figures["missing_in_git"] == 0 and figures["in_sync"] > 50

    client.force_login(provisioned["admin"])
    with django_assert_max_num_queries(8):
        assert client.get("/tenants/payments/truth/").status_code == 200


def test_the_flux_roots_ready_condition_is_read(provisioned, sandbox):
    path = (
        "/apis/kustomize.toolkit.fluxcd.io/v1/namespaces/payments-gitops/kustomizations/berth-root"
    )
    root = as_admin(sandbox, "GET", path)
    root["status"] = {
        "conditions": [
            {
                "type": "Ready",
                "status": "False",
                "reason": "BuildFailed",
                "message": "kustomize build failed",
                "lastTransitionTime": "2026-11-24T10:00:00Z",
            }
        ]
    }
    as_admin(sandbox, "PUT", f"{path}/status", root)
    table = provisioner.take_truth(provisioned["tenant"])
    [row] = [r for r in table["rows"] if r["object"] == "Kustomization/payments-gitops/berth-root"]
    assert row["engine"] == "Not ready: BuildFailed"


def test_beat_retakes_every_tenants_table_and_a_cluster_down_is_said(provisioned, settings):
    from provisioning.tasks import take_truth_tables
    from tenants.models import Cluster

    assert take_truth_tables() == 1  # payments: the one tenant with live namespaces
    assert TruthTable.objects.get(tenant=provisioned["tenant"]).counts["drifted"] == 0

    settings.KUBE_BACKOFF_SECONDS = 0.01
    Cluster.objects.filter(name="sandbox").update(api_url="http://127.0.0.1:9")
    table = provisioner.take_truth(provisioned["tenant"])
    [problem] = table["problems"]
    assert problem.startswith("sandbox: the cluster could not be read:")
    assert {row["source"] for row in table["rows"]} == {"git"}  # the repository still is
    assert all(row["state"] == "in_sync" for row in table["rows"])


def test_a_kargo_stage_is_read_under_the_charts_role_and_a_refusal_is_said(provisioned, sandbox):
    """The chart gives Berth `get` on Stages: their status shows. A cluster whose role does
    not (an older chart) answers 403, and the table says so instead of showing nothing."""

    def stage_rows() -> list[dict]:
        table = provisioner.take_truth(provisioned["tenant"])
        return [r for r in table["rows"] if r["source"] == "git" and "Stage " in r["engine"]]

    stages = stage_rows()
    assert stages, "cart's Kargo files name Stages"
    assert not any("cannot read" in r["engine"] for r in stages)
    sandbox.inject_faults(
        403,
        times=None,
        method="GET",
        path_contains="/stages/",
        message='stages.kargo.akuity.io "dev" is forbidden',
    )
    assert all("Berth cannot read it (403" in r["engine"] for r in stage_rows())


def test_a_table_taken_before_a_request_went_ready_is_retaken_when_it_does(
    provisioned, eager_tasks, django_capture_on_commit_callbacks
):
    """Taken while a namespace was being made, the table would show what it adds as missing
    or orphaned until beat's next round: Ready retakes it at once."""
    from tests.support.gitops_loop import ask_for_web

    provisioner.take_truth(provisioned["tenant"])
    before = TruthTable.objects.get(tenant=provisioned["tenant"])
    assert not any("payments-web-dev" in row["object"] for row in before.rows)

    made = ask_for_web(provisioned)
    with django_capture_on_commit_callbacks(execute=True):
        work()

    made.refresh_from_db()
    assert made.state == "ready", made.status_message
    after = TruthTable.objects.get(tenant=provisioned["tenant"])
    assert after.taken_at > before.taken_at
    web = [row for row in after.rows if "payments-web-dev" in row["object"]]
    assert web and {row["state"] for row in web} == {"in_sync"}
    assert after.counts["orphan"] == 0 and after.counts["missing_in_cluster"] == 0
