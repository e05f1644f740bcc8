"""What platform admins type is validated too: group names, namespaces, cluster URLs, and
a change that would take a whole role out of a tenant needs saying so."""

from __future__ import annotations

import json

import pytest

from tenants.choices import MembershipSource, Role
from tenants.models import AuditEvent, Cluster, Membership, Tenant
from tests.support.api import api, assert_problem

TENANT = "/api/v1/tenants/payments/"


@pytest.mark.parametrize(
    ("groups", "problem"),
    [
        (["payments\x07devs"], "control or invisible"),
        (["pay\u200bments"], "control or invisible"),
        ([" payments-devs"], "spaces"),
        (["system:masters"], "Kubernetes system group"),
        ([""], "may not be blank"),
        (["a", "a"], "twice"),
    ],
)
def test_group_names_that_could_not_be_a_real_group_are_refused(api_world, groups, problem):
    before = Tenant.objects.get(slug="payments").member_groups
    response = api(api_world.admin).patch(TENANT, {"member_groups": groups}, format="json")
    errors = assert_problem(response, 400)["errors"]
    said = " ".join(
        " ".join(messages)
        for field, messages in errors.items()
        if field.startswith("member_groups")
    )
    assert problem in said
    assert Tenant.objects.get(slug="payments").member_groups == before
    assert not AuditEvent.objects.filter(action="tenant.update").exists()


@pytest.mark.parametrize("field", ["argocd_namespace", "ingress_namespace"])
@pytest.mark.parametrize("value", ["Argo_CD", "-argocd", "a" * 64, "argo cd"])
def test_cluster_namespaces_must_be_namespace_names(api_world, field, value):
    response = api(api_world.admin).patch(
        "/api/v1/clusters/sandbox/", {field: value}, format="json"
    )
    assert field in assert_problem(response, 400)["errors"]
    assert getattr(Cluster.objects.get(name="sandbox"), field) != value


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:8000", "http://localhost:8000/", "https://berth.example.com"]
)
def test_a_cluster_cannot_point_back_at_berth(api_world, settings, url):
    settings.BERTH_BASE_URL = "http://127.0.0.1:8000"
    settings.ALLOWED_HOSTS = ["berth.example.com", "localhost", "testserver"]
    response = api(api_world.admin).post(
        "/api/v1/clusters/", {"name": "loop", "api_url": url}, format="json"
    )
    assert "Berth's own address" in " ".join(assert_problem(response, 400)["errors"]["api_url"])
    assert not Cluster.objects.filter(name="loop").exists()
    # Another port on the same machine (the stand-in's, say) is a cluster like any other.
    fine = api(api_world.admin).post(
        "/api/v1/clusters/",
        {"name": "next-door", "api_url": "http://127.0.0.1:6443"},
        format="json",
    )
    assert fine.status_code == 201, fine.json()


def test_emptying_a_role_held_by_people_needs_a_confirmation(api_world):
    members = Membership.objects.filter(
        tenant__slug="payments", role=Role.MEMBER, source=MembershipSource.OIDC
    ).count()
    assert members  # the demo world has members through groups
    client = api(api_world.admin)

    refused = client.patch(TENANT, {"member_groups": []}, format="json")
    message = " ".join(assert_problem(refused, 400)["errors"]["member_groups"])
    assert "removes every member of payments" in message and str(members) in message
    assert Tenant.objects.get(slug="payments").member_groups  # nothing changed

    confirmed = client.patch(TENANT, {"member_groups": [], "confirm_removals": True}, format="json")
    assert confirmed.status_code == 200, confirmed.json()
    assert Tenant.objects.get(slug="payments").member_groups == []
    assert "confirm_removals" not in confirmed.json()


def test_replacing_groups_or_emptying_an_unheld_role_needs_no_confirmation(api_world):
    client = api(api_world.admin)
    assert (
        client.patch(TENANT, {"member_groups": ["payments-newteam"]}, format="json").status_code
        == 200
    )
    Membership.objects.filter(tenant__slug="payments", role=Role.VIEWER).delete()
    assert client.patch(TENANT, {"viewer_groups": []}, format="json").status_code == 200


def test_the_admin_form_asks_for_the_same_confirmation(api_world, rf):
    from django.contrib import admin
    from django.forms.models import model_to_dict

    tenant = Tenant.objects.get(slug="payments")
    request = rf.get("/admin/")
    request.user = api_world.admin
    TenantForm = admin.site._registry[Tenant].get_form(request, obj=tenant)
    data = {key: value for key, value in model_to_dict(tenant).items() if value is not None}
    data |= {
        "member_groups": "[]",
        "owner_groups": json.dumps(tenant.owner_groups),
        "viewer_groups": json.dumps(tenant.viewer_groups),
        "allowed_domains": json.dumps(tenant.allowed_domains),
        "notify_emails": json.dumps(tenant.notify_emails),
        "allowed_clusters": [c.pk for c in tenant.allowed_clusters.all()],
        "allowed_tiers": [t.pk for t in tenant.allowed_tiers.all()],
    }

    refused = TenantForm(data=data, instance=tenant)
    assert not refused.is_valid()
    assert "removes every member" in " ".join(refused.errors["member_groups"])

    confirmed = TenantForm(data={**data, "confirm_removals": "on"}, instance=tenant)
    assert confirmed.is_valid(), confirmed.errors
