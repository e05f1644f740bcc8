"""Namespaces, projects and their environments through the REST API: state, quota and drift,
filters, and each scoped to your tenants (404 outside them).

Roles come from the demo world (tests/support/api.py): admin (pat), owner (olivia),
member (dev), viewer (vera) of payments, and outsider (sam, a member of search only).
"""

from __future__ import annotations

from tenants.models import Namespace, Project
from tests.support.api import api, assert_problem
from tests.support.tenants_api import active_namespace

# --- namespaces, projects, environments ----------------------------------------------------


def test_namespaces_show_state_quota_and_drift_scoped_to_your_tenants(api_world):
    namespace = active_namespace(api_world)
    Namespace.objects.filter(pk=namespace.pk).update(
        drift=[{"object": "ResourceQuota/quota", "status": "changed", "detail": "cpu"}]
    )
    body = api(api_world.viewer).get("/api/v1/namespaces/").json()
    item = body["results"][0]
    assert item["name"] == "payments-live-dev" and item["state"] == "active"
    assert item["quota"] == {
        "cpu": "500m",
        "memory": "512Mi",
        "storage": "0Gi",
        "cpu_millis": 500,
        "memory_mib": 512,
        "storage_gib": 0,
    }
    assert item["drift"][0]["status"] == "changed" and "drift_checked_at" in item

    outsider = api(api_world.outsider)
    assert outsider.get("/api/v1/namespaces/").json()["count"] == 0
    assert_problem(outsider.get(f"/api/v1/namespaces/{namespace.pk}/"), 404)


def test_namespaces_filter_by_state_tier_and_tenant(api_world):
    active_namespace(api_world, name="payments-a-dev")
    active_namespace(api_world, name="payments-b-prod", tier="prod")
    client = api(api_world.admin)

    def names(query):
        return {n["name"] for n in client.get("/api/v1/namespaces/", query).json()["results"]}

    assert names({"tier": "prod"}) == {"payments-b-prod"}
    assert names({"state": "requested"}) == set()
    assert names({"tenant": "search"}) == set()
    assert names({"tenant": "payments"}) == {"payments-a-dev", "payments-b-prod"}


def test_project_environments_are_its_namespaces(api_world):
    project = Project.objects.create(tenant=api_world.payments, name="billing")
    active_namespace(api_world, name="payments-billing-dev", project=project)
    active_namespace(api_world, name="payments-billing-prod", project=project, tier="prod")
    active_namespace(api_world, name="payments-other-dev")

    client = api(api_world.member)
    assert client.get("/api/v1/projects/").json()["results"][0]["name"] == "billing"
    body = client.get(f"/api/v1/projects/{project.pk}/environments/").json()
    assert [n["name"] for n in body["results"]] == ["payments-billing-dev", "payments-billing-prod"]
    assert [n["project_name"] for n in body["results"]] == ["billing", "billing"]
    filtered = client.get("/api/v1/namespaces/", {"project": project.pk}).json()
    assert filtered["count"] == 2

    outsider = api(api_world.outsider)
    assert outsider.get("/api/v1/projects/").json()["count"] == 0
    assert_problem(outsider.get(f"/api/v1/projects/{project.pk}/"), 404)
    assert_problem(outsider.get(f"/api/v1/projects/{project.pk}/environments/"), 404)
