"""The REST API's endpoints and who may use them (/api/v1/).

Roles come from the demo world (tests/support/api.py): admin (pat), owner (olivia),
member (dev), viewer (vera) of payments, and outsider (sam, a member of search only).
"""

from __future__ import annotations

import pytest

from tenants import services
from tenants.choices import NamespaceState, RequestState, Role
from tenants.demo import DEMO_BUDGET
from tenants.models import (
    AuditEvent,
    Cluster,
    Comment,
    EnvironmentTier,
    Membership,
    Namespace,
    Project,
    Request,
    Tenant,
)
from tenants.selectors import review
from tests.support.api import NAMESPACE, api, assert_problem, submit
from tests.support.workflow import approve_if_needed

REQUESTS = "/api/v1/requests/"


def active_namespace(world, name="payments-live-dev", tenant=None, project=None, tier="dev"):
    return Namespace.objects.create(
        name=name,
        tenant=tenant or world.payments,
        tier=EnvironmentTier.objects.get(slug=tier),
        cluster=Cluster.objects.get(name="sandbox"),
        project=project,
        cpu_millis=500,
        memory_mib=512,
        state=NamespaceState.ACTIVE,
    )


def failed_request(world):
    tenancy_request = submit(world, tier="dev", app="broken")  # approved by policy
    run = services.start_provisioning(request_id=tenancy_request.pk, plan_digest="x")
    services.mark_failed(run=run, error="the API server said no")
    return tenancy_request


# --- submitting ----------------------------------------------------------------------------


def test_member_requests_a_dev_namespace_and_policy_approves_it(world):
    response = api(world.member).post(
        REQUESTS,
        {"tenant": "payments", "kind": "namespace", "payload": NAMESPACE},
        format="json",
    )

    assert response.status_code == 201, response.json()
    body = response.json()
    assert response["Location"] == f"/api/v1/requests/{body['id']}/"
    assert body["state"] == RequestState.APPROVED
    assert body["payload"]["cpu_millis"] == 500
    assert body["requester"] == "dev" and body["tenant"] == "payments"
    assert body["plan"]["digest"] == review(Request.objects.get()).digest
    assert "kind: Namespace" in body["plan"]["yaml"]
    assert [event["action"] for event in body["history"]] == ["request.submit", "request.approve"]
    assert body["approvals"][0]["approver"] is None  # the policy
    assert AuditEvent.objects.filter(action="request.submit", actor=world.member).exists()


@pytest.mark.parametrize(
    ("kind", "payload", "setup"),
    [
        (
            "project",
            {
                "app": "checkout",
                "engine": "argocd",
                "cluster": "sandbox",
                "tiers": ["dev", "staging"],
            },
            None,
        ),
        (
            "environment",
            {
                "project": "billing",
                "tier": "staging",
                "cluster": "sandbox",
                "cpu": "1",
                "memory": "1Gi",
            },
            "project",
        ),
        (
            "quota_change",
            {"namespace": "payments-live-dev", "cpu": "2", "memory": "2Gi"},
            "namespace",
        ),
        ("decommission", {"namespace": "payments-live-dev", "reason": "done with it"}, "namespace"),
    ],
)
def test_every_kind_of_request_can_be_submitted(world, kind, payload, setup):
    if setup == "project":
        Project.objects.create(tenant=world.payments, name="billing")
    elif setup == "namespace":
        active_namespace(world)

    response = api(world.owner).post(
        REQUESTS, {"tenant": "payments", "kind": kind, "payload": payload}, format="json"
    )

    assert response.status_code == 201, response.json()
    assert response.json()["kind"] == kind


def test_payload_is_checked_by_the_same_rules_as_the_form(world):
    response = api(world.member).post(
        REQUESTS,
        {
            "tenant": "payments",
            "kind": "namespace",
            "payload": {**NAMESPACE, "app": "Bad_Name", "cpu": "plenty"},
        },
        format="json",
    )

    body = assert_problem(response, 400, "validation-error")
    assert set(body["errors"]) == {"payload.app", "payload.cpu"}
    assert "not a Kubernetes quantity" in body["errors"]["payload.cpu"][0]
    assert not Request.objects.exists()


def test_over_budget_is_a_validation_error_with_the_numbers(world):
    Tenant.objects.filter(pk=world.payments.pk).update(budget_cpu_millis=400)
    response = api(world.member).post(
        REQUESTS,
        {"tenant": "payments", "kind": "namespace", "payload": NAMESPACE},
        format="json",
    )
    body = assert_problem(response, 400, "validation-error")
    assert any("budget" in message for messages in body["errors"].values() for message in messages)


def test_viewer_is_denied_by_the_approval_policy(world):
    response = api(world.viewer).post(
        REQUESTS,
        {"tenant": "payments", "kind": "namespace", "payload": NAMESPACE},
        format="json",
    )
    body = assert_problem(response, 403, "forbidden")
    assert "Viewers cannot make requests" in body["detail"]


@pytest.mark.parametrize("slug", ["search", "no-such-tenant"])
def test_requesting_for_a_tenant_you_are_not_in_is_404(world, slug):
    response = api(world.member).post(
        REQUESTS, {"tenant": slug, "kind": "namespace", "payload": NAMESPACE}, format="json"
    )
    assert_problem(response, 404, "not-found")


# --- reading -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("who", "visible"),
    [
        ("admin", {"payments", "search"}),
        ("owner", {"payments"}),
        ("member", {"payments"}),
        ("viewer", {"payments"}),
        ("outsider", {"search"}),
    ],
)
def test_request_list_is_scoped_to_your_tenants(world, who, visible):
    submit(world, app="one")
    submit(world, app="two", tenant=world.search, requester=world.outsider)

    body = api(getattr(world, who)).get(REQUESTS).json()

    assert body["count"] == len(visible)
    assert {item["tenant"] for item in body["results"]} == visible


@pytest.mark.parametrize(
    ("who", "status"),
    [
        ("admin", 200),
        ("owner", 200),
        ("member", 200),
        ("viewer", 200),
        ("outsider", 404),
    ],
)
def test_request_detail_is_404_outside_your_tenants(world, who, status):
    tenancy_request = submit(world, tier="prod")
    response = api(getattr(world, who)).get(f"{REQUESTS}{tenancy_request.pk}/")
    assert response.status_code == status
    if status == 404:
        assert_problem(response, 404, "not-found")


def test_request_detail_has_plan_approvals_comments_history_and_permissions(world):
    tenancy_request = submit(world, tier="prod")
    services.add_comment(request_id=tenancy_request.pk, author=world.owner, body="LGTM")

    body = api(world.admin).get(f"{REQUESTS}{tenancy_request.pk}/").json()

    assert body["state"] == "submitted" and body["state_label"] == "Awaiting approval"
    assert body["plan"]["digest"] == review(tenancy_request).digest
    assert body["plan"]["objects"][0]["kind"] == "Namespace"
    assert body["comments"] == [
        {
            "id": body["comments"][0]["id"],
            "author": "olivia",
            "body": "LGTM",
            "created_at": body["comments"][0]["created_at"],
        }
    ]
    assert body["history"][0]["action"] == "request.submit"
    assert body["permissions"] == {"may_decide": True, "may_cancel": True, "may_retry": False}


def test_a_decided_request_has_no_future_plan(world):
    tenancy_request = submit(world, tier="prod")
    services.cancel_request(request_id=tenancy_request.pk, actor=world.member)
    body = api(world.member).get(f"{REQUESTS}{tenancy_request.pk}/").json()
    assert body["plan"] is None and body["state"] == "cancelled"


@pytest.mark.parametrize(
    ("query", "apps"),
    [
        ({"state": "submitted"}, {"prod-app"}),
        ({"state": "approved"}, {"dev-app"}),
        ({"tier": "prod"}, {"prod-app"}),
        ({"kind": "project"}, set()),
        ({"tenant": "payments"}, {"dev-app", "prod-app"}),
        ({"older_than": "1d"}, set()),
    ],
)
def test_requests_are_filtered_with_the_dashboards_filterset(world, query, apps):
    submit(world, tier="dev", app="dev-app")
    submit(world, tier="prod", app="prod-app")
    body = api(world.member).get(REQUESTS, query).json()
    assert {item["payload"]["app"] for item in body["results"]} == apps


def test_filtering_by_a_tenant_you_cannot_see_is_a_validation_error(world):
    response = api(world.member).get(REQUESTS, {"tenant": "search"})
    assert "tenant" in assert_problem(response, 400, "validation-error")["errors"]


def test_requests_are_ordered_newest_first_unless_asked(world):
    first, second = submit(world, app="one"), submit(world, app="two")
    client = api(world.member)
    assert [r["id"] for r in client.get(REQUESTS).json()["results"]] == [second.pk, first.pk]
    ordered = client.get(REQUESTS, {"ordering": "created_at"}).json()["results"]
    assert [r["id"] for r in ordered] == [first.pk, second.pk]
    several = client.get(REQUESTS, {"ordering": "kind,-id"}).json()["results"]
    assert [r["id"] for r in several] == [second.pk, first.pk]


def test_an_ordering_the_list_cannot_sort_by_is_refused_naming_what_it_can(world):
    """Not quietly replaced by the default order: a program paging through it would get
    rows in an order it did not ask for."""
    submit(world, app="one")
    response = api(world.member).get(REQUESTS, {"ordering": "requester__password,-id"})

    [message] = assert_problem(response, 400)["errors"]["ordering"]
    assert "'requester__password'" in message and "'-id'" not in message
    assert "created_at, id, kind, state, updated_at" in message
    # What is echoed back is cut short.
    long = api(world.member).get(REQUESTS, {"ordering": "x" * 5000})
    assert len(assert_problem(long, 400)["errors"]["ordering"][0]) < 300


def test_pages_hold_page_size_items_at_most_200(world):
    Request.objects.bulk_create(
        [
            Request(tenant=world.payments, kind="namespace", payload={}, requester=world.member)
            for _ in range(205)
        ]
    )
    client = api(world.member)
    page = client.get(REQUESTS, {"page_size": 2}).json()
    assert page["count"] == 205 and len(page["results"]) == 2 and "page=2" in page["next"]
    assert len(client.get(REQUESTS).json()["results"]) == 50
    assert len(client.get(REQUESTS, {"page_size": 1000}).json()["results"]) == 200
    assert_problem(client.get(REQUESTS, {"page": 99}), 404, "not-found")


# --- deciding and acting -------------------------------------------------------------------


def approve(client, tenancy_request, digest=None, note="ok"):
    digest = digest or review(tenancy_request).digest
    return client.post(
        f"{REQUESTS}{tenancy_request.pk}/approve/",
        {"plan_digest": digest, "note": note},
        format="json",
    )


@pytest.mark.parametrize(
    ("tier", "who", "status"),
    [
        ("prod", "admin", 200),
        ("prod", "owner", 403),
        ("prod", "member", 403),
        ("prod", "viewer", 403),
        ("prod", "outsider", 404),
        ("staging", "owner", 200),
        ("staging", "member", 403),
    ],
)
def test_approval_follows_the_policys_approver_role(world, tier, who, status):
    tenancy_request = submit(world, tier=tier)
    response = approve(api(getattr(world, who)), tenancy_request)
    assert response.status_code == status, response.json()
    if status == 200:
        assert response.json()["state"] == "approved"
        assert response.json()["approvals"][-1]["approver"] == getattr(world, who).username
    else:
        assert_problem(response, status)


def test_nobody_approves_their_own_request(world):
    tenancy_request = submit(world, tier="prod", requester=world.admin)
    body = assert_problem(approve(api(world.admin), tenancy_request), 403, "forbidden")
    assert "own request" in body["detail"]


def test_approving_a_stale_plan_is_409_with_the_current_digest(world):
    tenancy_request = submit(world, tier="prod")
    body = assert_problem(
        approve(api(world.admin), tenancy_request, digest="0" * 64), 409, "plan-changed"
    )
    assert body["current_plan_digest"] == review(tenancy_request).digest
    assert Request.objects.get().state == RequestState.SUBMITTED


def test_approving_twice_is_an_illegal_transition(world):
    tenancy_request = submit(world, tier="prod")
    client = api(world.admin)
    assert approve(client, tenancy_request).status_code == 200
    body = assert_problem(approve(client, tenancy_request), 409, "illegal-transition")
    assert "cannot be approved" in body["detail"]


def test_approval_needs_a_well_formed_digest(world):
    tenancy_request = submit(world, tier="prod")
    body = assert_problem(approve(api(world.admin), tenancy_request, digest="abc"), 400)
    assert "plan_digest" in body["errors"]


def test_reject_needs_a_reason_and_releases_the_name(world):
    tenancy_request = submit(world, tier="prod")
    client = api(world.admin)
    url = f"{REQUESTS}{tenancy_request.pk}/reject/"
    assert (
        "reason" in assert_problem(client.post(url, {"reason": "  "}, format="json"), 400)["errors"]
    )

    response = client.post(url, {"reason": "Use staging first."}, format="json")

    assert response.json()["state"] == "rejected"
    assert response.json()["status_message"] == "Use staging first."
    assert not Namespace.objects.exists()


def test_reject_by_a_member_is_403(world):
    tenancy_request = submit(world, tier="prod", requester=world.owner)
    response = api(world.member).post(
        f"{REQUESTS}{tenancy_request.pk}/reject/", {"reason": "no"}, format="json"
    )
    assert_problem(response, 403)


@pytest.mark.parametrize(
    ("who", "status"),
    [
        ("member", 200),  # the requester
        ("admin", 200),
        ("owner", 403),
        ("viewer", 403),
        ("outsider", 404),
    ],
)
def test_cancel_is_for_the_requester_or_a_platform_admin(world, who, status):
    tenancy_request = submit(world, tier="prod")
    response = api(getattr(world, who)).post(f"{REQUESTS}{tenancy_request.pk}/cancel/")
    assert response.status_code == status
    if status == 200:
        assert response.json()["state"] == "cancelled"


def test_cancelling_an_approved_request_is_409(world):
    tenancy_request = submit(world, tier="dev")
    response = api(world.member).post(f"{REQUESTS}{tenancy_request.pk}/cancel/")
    body = assert_problem(response, 409, "illegal-transition")
    assert "approved" in body["detail"]


@pytest.mark.parametrize(
    ("who", "status"),
    [
        ("member", 201),
        ("viewer", 201),
        ("owner", 201),
        ("admin", 201),
        ("outsider", 404),
    ],
)
def test_anyone_who_sees_a_request_may_comment(world, who, status):
    tenancy_request = submit(world, tier="prod")
    response = api(getattr(world, who)).post(
        f"{REQUESTS}{tenancy_request.pk}/comment/", {"body": "Any news?"}, format="json"
    )
    assert response.status_code == status
    if status == 201:
        assert response.json()["author"] == getattr(world, who).username
        assert Comment.objects.get().body == "Any news?"


def test_comment_needs_text_and_at_most_4000_characters(world):
    tenancy_request = submit(world, tier="prod")
    client = api(world.member)
    url = f"{REQUESTS}{tenancy_request.pk}/comment/"
    assert_problem(client.post(url, {"body": ""}, format="json"), 400)
    assert_problem(client.post(url, {"body": "x" * 4001}, format="json"), 400)


@pytest.mark.parametrize(
    ("who", "status"),
    [
        ("admin", 200),
        ("owner", 403),
        ("member", 403),
        ("outsider", 404),
    ],
)
def test_retry_of_a_failed_request_is_for_platform_admins(world, who, status):
    tenancy_request = failed_request(world)
    response = api(getattr(world, who)).post(f"{REQUESTS}{tenancy_request.pk}/retry/")
    assert response.status_code == status
    if status == 200:
        assert response.json()["state"] == "provisioning"


def test_retrying_a_request_that_did_not_fail_is_409(world):
    tenancy_request = submit(world, tier="dev")
    assert_problem(
        api(world.admin).post(f"{REQUESTS}{tenancy_request.pk}/retry/"), 409, "illegal-transition"
    )


def test_runs_show_steps_attempts_and_error(world):
    tenancy_request = failed_request(world)

    body = api(world.member).get(f"{REQUESTS}{tenancy_request.pk}/runs/").json()

    assert body["count"] == 1
    run = body["results"][0]
    assert run["state"] == "failed" and run["error"] == "the API server said no"
    assert {"steps", "attempts", "plan_digest", "started_at", "finished_at"} <= set(run)
    assert api(world.outsider).get(f"{REQUESTS}{tenancy_request.pk}/runs/").status_code == 404


# --- token scopes --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("scopes", "method", "path", "status"),
    [
        (["read"], "get", "requests", 200),
        (["read"], "post", "submit", 403),
        (["request"], "get", "requests", 403),
        (["request"], "post", "submit", 201),
        (["read", "request"], "post", "approve", 403),
        (["approve"], "post", "approve", 200),
        (["approve"], "post", "submit", 403),
        (["read", "request", "approve"], "post", "tenants", 403),
        (["admin"], "post", "tenants", 201),
    ],
)
def test_a_token_can_do_only_what_its_scopes_say(world, scopes, method, path, status):
    pending = submit(world, tier="prod")
    client = api(world.admin, scopes=scopes)
    if path == "requests":
        response = client.get(REQUESTS)
    elif path == "submit":
        response = client.post(
            REQUESTS,
            {"tenant": "payments", "kind": "namespace", "payload": {**NAMESPACE, "app": "other"}},
            format="json",
        )
    elif path == "approve":
        pending = submit(world, tier="prod", app="approve-me")
        response = approve(client, pending)
    else:
        response = client.post(
            "/api/v1/tenants/", {"slug": "newteam", "name": "New"}, format="json"
        )
    assert response.status_code == status, response.json()
    if status == 403:
        assert "scope" in assert_problem(response, 403, "forbidden")["detail"]


# --- tenants, clusters, tiers --------------------------------------------------------------


def test_members_see_their_tenants_with_their_role_and_no_secrets(world):
    Tenant.objects.filter(pk=world.payments.pk).update(gitops_repo_url="https://git/x")
    tenant = Tenant.objects.get(pk=world.payments.pk)
    tenant.gitops_credentials = "s3cret-token"
    tenant.save()

    body = api(world.member).get("/api/v1/tenants/").json()

    assert [(t["slug"], t["role"]) for t in body["results"]] == [("payments", Role.MEMBER)]
    payments = body["results"][0]
    assert payments["gitops_credentials_set"] is True
    assert "gitops_credentials" not in payments and "s3cret-token" not in str(body)
    assert payments["allowed_tiers"] == ["review", "dev", "staging", "prod"] or set(
        payments["allowed_tiers"]
    ) == {"dev", "staging", "prod", "review"}


@pytest.mark.parametrize(
    ("who", "status"),
    [
        ("admin", 200),
        ("owner", 200),
        ("viewer", 200),
        ("outsider", 404),
    ],
)
def test_tenant_detail_is_404_for_outsiders(world, who, status):
    assert api(getattr(world, who)).get("/api/v1/tenants/payments/").status_code == status


def test_platform_admin_onboards_a_tenant_through_the_service(world):
    response = api(world.admin).post(
        "/api/v1/tenants/",
        {
            "slug": "orders",
            "name": "Orders team",
            "owner_groups": ["orders-owners"],
            "member_groups": ["orders-devs"],
            "gitops_repo_url": "https://git.example.com/o.git",
            "gitops_credentials": "tok",
            "allowed_clusters": ["sandbox"],
            "allowed_tiers": ["dev", "prod"],
            "budget_cpu_millis": 4000,
        },
        format="json",
    )

    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["slug"] == "orders" and body["gitops_credentials_set"] is True
    assert sorted(body["allowed_tiers"]) == ["dev", "prod"]
    event = AuditEvent.objects.get(action="tenant.onboard")
    assert event.actor == world.admin and "tok" not in str(event.after)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"slug": "Bad Slug", "name": "x"}, "slug"),
        ({"slug": "payments", "name": "x"}, "slug"),
        ({"slug": "ok", "name": "x", "budget_cpu_millis": -1}, "budget_cpu_millis"),
        ({"slug": "ok", "name": "x", "budget_cpu_millis": 10**30}, "budget_cpu_millis"),
        ({"slug": "ok", "name": "x", "allowed_tiers": ["gold"]}, "allowed_tiers"),
        ({"slug": "ok", "name": "x", "notify_emails": ["not-an-address"]}, "notify_emails.0"),
        ({"slug": "kube", "name": "x"}, "slug"),
    ],
)
def test_onboarding_errors_name_the_field(world, body, field):
    response = api(world.admin).post("/api/v1/tenants/", body, format="json")
    assert field in assert_problem(response, 400, "validation-error")["errors"]


def test_members_cannot_onboard_or_change_tenants(world):
    client = api(world.owner)
    assert_problem(client.post("/api/v1/tenants/", {"slug": "x", "name": "x"}, format="json"), 403)
    assert_problem(client.patch("/api/v1/tenants/payments/", {"name": "Mine"}, format="json"), 403)


def test_platform_admin_changes_groups_and_budget_audited(world):
    response = api(world.admin).patch(
        "/api/v1/tenants/payments/",
        {
            "member_groups": ["payments-devs", "payments-contractors"],
            "budget_namespaces": 25,
            "allowed_tiers": ["dev"],
            "webhook_secret": "hush",
        },
        format="json",
    )

    assert response.status_code == 200, response.json()
    tenant = Tenant.objects.get(slug="payments")
    assert tenant.member_groups == ["payments-devs", "payments-contractors"]
    assert tenant.budget_namespaces == 25 and tenant.webhook_secret == "hush"
    assert list(tenant.allowed_tiers.values_list("slug", flat=True)) == ["dev"]
    event = AuditEvent.objects.get(action="tenant.update")
    before = DEMO_BUDGET["budget_namespaces"]  # the demo's
    assert event.after["budget_namespaces"] == 25 and event.before["budget_namespaces"] == before
    assert event.after["webhook_secret"] == "(set)" and "hush" not in str(event.after)
    assert response.json()["webhook_secret_set"] is True


def test_clusters_are_for_platform_admins_and_credentials_are_write_only(world):
    client = api(world.admin)
    created = client.post(
        "/api/v1/clusters/",
        {
            "name": "prod-eu",
            "api_url": "https://k8s.example.com:6443",
            "credentials": "sa-token-123",
            "ca_certificate": "-----BEGIN CERTIFICATE-----",
        },
        format="json",
    )
    assert created.status_code == 201, created.json()
    assert created.json()["credentials_set"] is True
    assert "sa-token-123" not in created.content.decode()
    assert Cluster.objects.get(name="prod-eu").credentials == "sa-token-123"
    assert AuditEvent.objects.filter(action="cluster.create").exists()

    changed = client.patch("/api/v1/clusters/prod-eu/", {"plan_only": True}, format="json")
    assert changed.json()["plan_only"] is True
    assert "sa-token-123" not in client.get("/api/v1/clusters/").content.decode()

    for who in ("owner", "member"):
        assert_problem(api(getattr(world, who)).get("/api/v1/clusters/"), 403)


def test_cluster_with_a_bad_url_is_400(world):
    response = api(world.admin).post(
        "/api/v1/clusters/", {"name": "x", "api_url": "ftp://x"}, format="json"
    )
    assert "api_url" in assert_problem(response, 400)["errors"]


def test_tiers_are_readable_by_every_member(world):
    body = api(world.viewer).get("/api/v1/tiers/").json()
    assert [tier["slug"] for tier in body["results"]] == ["review", "dev", "staging", "prod"]
    assert api(world.viewer).get("/api/v1/tiers/prod/").json()["max_cpu_millis"] == 16000


# --- namespaces, projects, environments ----------------------------------------------------


def test_namespaces_show_state_quota_and_drift_scoped_to_your_tenants(world):
    namespace = active_namespace(world)
    Namespace.objects.filter(pk=namespace.pk).update(
        drift=[{"object": "ResourceQuota/quota", "status": "changed", "detail": "cpu"}]
    )
    body = api(world.viewer).get("/api/v1/namespaces/").json()
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

    outsider = api(world.outsider)
    assert outsider.get("/api/v1/namespaces/").json()["count"] == 0
    assert_problem(outsider.get(f"/api/v1/namespaces/{namespace.pk}/"), 404)


def test_namespaces_filter_by_state_tier_and_tenant(world):
    active_namespace(world, name="payments-a-dev")
    active_namespace(world, name="payments-b-prod", tier="prod")
    client = api(world.admin)

    def names(query):
        return {n["name"] for n in client.get("/api/v1/namespaces/", query).json()["results"]}

    assert names({"tier": "prod"}) == {"payments-b-prod"}
    assert names({"state": "requested"}) == set()
    assert names({"tenant": "search"}) == set()
    assert names({"tenant": "payments"}) == {"payments-a-dev", "payments-b-prod"}


def test_project_environments_are_its_namespaces(world):
    project = Project.objects.create(tenant=world.payments, name="billing")
    active_namespace(world, name="payments-billing-dev", project=project)
    active_namespace(world, name="payments-billing-prod", project=project, tier="prod")
    active_namespace(world, name="payments-other-dev")

    client = api(world.member)
    assert client.get("/api/v1/projects/").json()["results"][0]["name"] == "billing"
    body = client.get(f"/api/v1/projects/{project.pk}/environments/").json()
    assert [n["name"] for n in body["results"]] == ["payments-billing-dev", "payments-billing-prod"]
    assert [n["project_name"] for n in body["results"]] == ["billing", "billing"]
    filtered = client.get("/api/v1/namespaces/", {"project": project.pk}).json()
    assert filtered["count"] == 2

    outsider = api(world.outsider)
    assert outsider.get("/api/v1/projects/").json()["count"] == 0
    assert_problem(outsider.get(f"/api/v1/projects/{project.pk}/"), 404)
    assert_problem(outsider.get(f"/api/v1/projects/{project.pk}/environments/"), 404)


# --- audit events --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("who", "status", "tenants"),
    [
        ("admin", 200, {"payments", "search"}),
        ("owner", 200, {"payments"}),
        ("member", 403, None),
        ("viewer", 403, None),
        ("outsider", 403, None),
    ],
)
def test_audit_events_are_for_platform_admins_and_tenant_owners(world, who, status, tenants):
    submit(world, app="one")
    submit(world, app="two", tenant=world.search, requester=world.outsider)
    response = api(getattr(world, who)).get("/api/v1/audit-events/")
    assert response.status_code == status
    if tenants is not None:
        seen = {event["tenant"] for event in response.json()["results"]} - {None}  # tokens
        assert seen == tenants


def test_audit_events_filter_with_the_audit_filterset(world):
    tenancy_request = submit(world, tier="prod")
    approve_if_needed(tenancy_request, approver=world.admin)
    body = (
        api(world.admin)
        .get("/api/v1/audit-events/", {"action": "request.app", "actor": "pat"})
        .json()
    )
    assert [event["action"] for event in body["results"]] == ["request.approve"]
    assert_problem(api(world.admin).get("/api/v1/audit-events/", {"since": "yesterday"}), 400)


def test_owner_of_another_tenant_does_not_see_payments_events(world):
    Membership.objects.filter(user=world.outsider).update(role=Role.OWNER)
    submit(world, app="one")
    body = api(world.outsider).get("/api/v1/audit-events/").json()
    assert all(event["tenant"] != "payments" for event in body["results"])


# --- who am I ------------------------------------------------------------------------------


def test_me_tells_who_the_token_acts_as_and_its_scopes(world):
    body = api(world.owner, scopes=["read"]).get("/api/v1/me/").json()
    assert body["username"] == "olivia" and body["authentication"] == "api_token"
    assert body["scopes"] == ["read"] and body["memberships"] == [
        {"tenant": "payments", "role": "owner"}
    ]
