"""The request and approval workflow in the browser's pages (Django test client)."""

import csv
import io
import re

import pytest

from tenants import demo, services
from tenants.choices import RequestState
from tenants.models import (
    ApprovalRule,
    AuditEvent,
    EnvironmentTier,
    Namespace,
    Request,
    Tenant,
    User,
)
from tests.support.workflow import approve_if_needed

NAMESPACE_FORM = "/tenants/payments/request/namespace/"


@pytest.fixture
def world(db):
    demo.seed(sandbox_api_url="http://127.0.0.1:9")
    return {
        "tenant": Tenant.objects.get(slug="payments"),
        "developer": User.objects.get(username="dev"),
        "owner": User.objects.get(username="olivia"),
        "admin": User.objects.get(username="pat"),
        "outsider": User.objects.get(username="sam"),
    }


def submit(world, *, tier="prod", app="shop", requester=None):
    return services.submit_request(
        tenant=world["tenant"],
        kind="namespace",
        requester=requester or world["developer"],
        payload={"app": app, "tier": tier, "cluster": "sandbox", "cpu": "500m", "memory": "512Mi"},
    )


def form_data(**overrides):
    return {
        "app": "shop",
        "tier": "prod",
        "cluster": "sandbox",
        "cpu": "1",
        "memory": "1Gi",
        "storage": "",
        **overrides,
    }


def test_member_submits_a_namespace_request_and_lands_on_its_page(client, world):
    client.force_login(world["developer"])
    response = client.post(NAMESPACE_FORM, form_data())

    created = Request.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/requests/{created.pk}/"
    assert created.payload["cpu_millis"] == 1000
    assert created.state == RequestState.SUBMITTED


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("app", "Bad_Name", "lower-case letters"),
        ("cpu", "plenty", "not a Kubernetes quantity"),
        ("cpu", "40", "more than the prod tier allows"),
        ("tier", "gold", "Select a valid choice"),
    ],
)
def test_bad_input_re_renders_the_form_with_messages_and_saves_nothing(
    client, world, field, value, message
):
    client.force_login(world["developer"])
    response = client.post(NAMESPACE_FORM, form_data(**{field: value}))

    assert response.status_code == 200
    assert message in response.content.decode()
    assert value in response.content.decode()  # what was typed is kept
    assert not Request.objects.exists() and not Namespace.objects.exists()


def test_over_budget_is_shown_with_the_numbers(client, world):
    Tenant.objects.filter(slug="payments").update(budget_cpu_millis=1500)
    client.force_login(world["developer"])
    client.post(NAMESPACE_FORM, form_data(app="one"))

    page = client.post(NAMESPACE_FORM, form_data(app="two")).content.decode()

    assert (
        "Asks for 1 core of CPU, but payments has 1 of its budget of 1.5 cores of "
        "CPU taken: 0 in use "
        "by its namespaces, 1 requested by requests not yet provisioned; 0.5 left." in page
    )
    assert Request.objects.count() == 1


def test_policy_denial_is_shown_on_the_form(client, world):
    ApprovalRule.objects.create(
        position=1,
        name="freeze",
        outcome="deny",
        condition="true",
        message="Change freeze until Monday.",
    )
    client.force_login(world["developer"])
    page = client.post(NAMESPACE_FORM, form_data()).content.decode()
    assert "Change freeze until Monday." in page


def test_outsider_cannot_open_another_tenants_form(client, world):
    client.force_login(world["outsider"])
    assert client.get(NAMESPACE_FORM).status_code == 404


def test_name_preview_shows_the_truncated_final_name(client, world):
    client.force_login(world["developer"])
    app = "a-very-long-application-name-for-the-quarterly-reports"
    page = client.get(
        "/tenants/payments/name-preview/", {"app": app, "tier": "staging", "cluster": "sandbox"}
    ).content.decode()
    assert re.search(r"payments-a-very-long-application-name-for-[0-9a-f]{12}-staging</code>", page)
    assert "shortened with a stable hash" in page


def test_name_preview_warns_about_a_taken_name(client, world):
    submit(world)
    client.force_login(world["developer"])
    page = client.get(
        "/tenants/payments/name-preview/", {"app": "shop", "tier": "prod", "cluster": "sandbox"}
    ).content.decode()
    assert "payments-shop-prod is already taken (requested)" in page


def test_queue_shows_platform_admin_the_pending_requests_oldest_first(client, world):
    first, second = submit(world, app="one"), submit(world, app="two")
    client.force_login(world["admin"])
    page = client.get("/approvals/").content.decode()
    assert page.index(f"#{first.pk}<") < page.index(f"#{second.pk}<")


def test_queue_is_empty_for_a_developer(client, world):
    submit(world, requester=world["owner"])
    client.force_login(world["developer"])
    assert "Nothing is waiting for you." in client.get("/approvals/").content.decode()


def test_queue_shows_an_owner_only_what_owners_may_decide(client, world):
    staging, prod = submit(world, tier="staging", app="one"), submit(world, app="two")
    client.force_login(world["owner"])
    page = client.get("/approvals/").content.decode()
    assert f"#{staging.pk}<" in page
    assert f"#{prod.pk}<" not in page


@pytest.mark.parametrize(
    ("query", "shown"),
    [
        ({"tier": "staging"}, {"staging"}),
        ({"tier": "prod"}, {"prod"}),
        ({"kind": "namespace"}, {"staging", "prod"}),
        ({"kind": "project"}, set()),
        ({"tenant": "search"}, set()),
        ({"older_than": "1d"}, set()),
    ],
)
def test_queue_filters(client, world, query, shown):
    requests = {
        "staging": submit(world, tier="staging", app="one"),
        "prod": submit(world, tier="prod", app="two"),
    }
    client.force_login(world["admin"])
    page = client.get("/approvals/", query).content.decode()
    assert {tier for tier, item in requests.items() if f"#{item.pk}<" in page} == shown


def test_admin_approves_from_the_request_page(client, world):
    tenancy_request = submit(world)
    client.force_login(world["admin"])
    page = client.get(f"/requests/{tenancy_request.pk}/").content.decode()
    assert "Approve this plan" in page
    digest = page.split('name="plan_digest" value="')[1].split('"')[0]

    client.post(f"/requests/{tenancy_request.pk}/approve/", {"plan_digest": digest})

    tenancy_request.refresh_from_db()
    assert tenancy_request.state == RequestState.APPROVED
    assert tenancy_request.approvals.get().plan_digest == digest


def test_a_decision_without_the_right_is_403_and_audited(client, world):
    tenancy_request = submit(world)
    client.force_login(world["owner"])  # prod needs a platform admin
    assert (
        "Approve this plan" not in client.get(f"/requests/{tenancy_request.pk}/").content.decode()
    )

    response = client.post(f"/requests/{tenancy_request.pk}/approve/", {"plan_digest": "x"})

    assert response.status_code == 403
    assert AuditEvent.objects.filter(
        action="request.approve.refused", actor=world["owner"]
    ).exists()
    tenancy_request.refresh_from_db()
    assert tenancy_request.state == RequestState.SUBMITTED


def test_rejection_without_a_reason_is_refused_and_with_one_it_rejects(client, world):
    tenancy_request = submit(world)
    client.force_login(world["admin"])
    client.post(f"/requests/{tenancy_request.pk}/reject/", {"reason": ""})
    tenancy_request.refresh_from_db()
    assert tenancy_request.state == RequestState.SUBMITTED

    client.post(f"/requests/{tenancy_request.pk}/reject/", {"reason": "Use staging first."})
    tenancy_request.refresh_from_db()
    assert tenancy_request.state == RequestState.REJECTED
    assert tenancy_request.status_message == "Use staging first."


def test_requester_comments_and_cancels(client, world):
    tenancy_request = submit(world)
    client.force_login(world["developer"])
    client.post(f"/requests/{tenancy_request.pk}/comment/", {"body": "Needed for the launch."})
    client.post(f"/requests/{tenancy_request.pk}/cancel/")

    page = client.get(f"/requests/{tenancy_request.pk}/").content.decode()
    assert "Needed for the launch." in page
    tenancy_request.refresh_from_db()
    assert tenancy_request.state == RequestState.CANCELLED


def test_audit_page_shows_owners_their_tenant_only_and_developers_nothing(client, world):
    submit(world)
    services.submit_request(
        tenant=Tenant.objects.get(slug="search"),
        kind="namespace",
        requester=world["outsider"],
        payload={"app": "idx", "tier": "prod", "cluster": "sandbox", "cpu": "1", "memory": "1Gi"},
    )
    client.force_login(world["owner"])
    page = client.get("/audit/").content.decode()
    assert "payments" in page and ">search<" not in page

    client.force_login(world["developer"])
    assert client.get("/audit/").status_code == 403


def test_audit_csv_export_is_filtered_and_defuses_formulas(client, world):
    submit(world)
    AuditEvent.objects.create(
        actor_label="=HYPERLINK(evil)",
        action="tenant.note",
        object_type="tenants.tenant",
        object_id="1",
        tenant=world["tenant"],
    )
    client.force_login(world["admin"])
    response = client.get("/audit/", {"format": "csv", "tenant": "payments"})

    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert rows[0][:3] == ["time", "actor", "action"]
    actors = {row[1] for row in rows[1:]}
    assert "'=HYPERLINK(evil)" in actors
    assert "dev" in actors
    assert all(row[6] == "payments" for row in rows[1:])


def test_a_rule_that_does_not_compile_is_refused_at_save(client, world):
    client.force_login(world["admin"])
    response = client.post(
        "/policy/new/",
        {
            "position": 5,
            "name": "broken",
            "condition": "request.tier == ",
            "outcome": "require",
            "approvals_required": 1,
            "approver_role": "platform_admin",
            "enabled": "on",
        },
    )
    assert response.status_code == 200
    assert "does not compile" in response.content.decode()
    assert not ApprovalRule.objects.filter(name="broken").exists()


def test_admin_adds_a_rule_and_it_decides_the_next_request(client, world):
    client.force_login(world["admin"])
    client.post(
        "/policy/new/",
        {
            "position": 1,
            "name": "prod-needs-two",
            "condition": '"prod" in request.tiers',
            "outcome": "require",
            "approvals_required": 2,
            "approver_role": "platform_admin",
            "enabled": "on",
        },
    )
    assert AuditEvent.objects.filter(action="policy.rule_saved").exists()
    assert submit(world).policy_rule == "prod-needs-two"


def test_only_platform_admins_see_the_policy_pages(client, world):
    client.force_login(world["owner"])
    assert client.get("/policy/").status_code == 403
    assert client.post("/policy/new/", {"name": "x"}).status_code == 403


def test_onboarding_creates_a_tenant_ready_for_requests(client, world):
    client.force_login(world["admin"])
    response = client.post(
        "/tenants/new/",
        {
            "slug": "ledger",
            "name": "Ledger team",
            "owner_groups": "ledger-owners",
            "member_groups": "ledger-devs, ledger-contractors",
            "viewer_groups": "",
            "repo_url": "https://git.example.com/ledger/deploy.git",
            "branch": "main",
            "path": "clusters/prod",
            "credentials": "ghp_secret_token_value",
            "engine": "flux",
            "commit_url": "https://git.example.com/ledger/deploy/commit/{sha}",
            "cpu": "4",
            "memory": "8Gi",
            "storage": "50Gi",
            "namespaces": 5,
            "clusters": [world["tenant"].allowed_clusters.get().pk],
            "tiers": list(world["tenant"].allowed_tiers.values_list("pk", flat=True)),
            "allowed_domains": "ledger.example.com",
            "notify_emails": "ledger@example.com",
        },
    )

    assert response.status_code == 302
    tenant = Tenant.objects.get(slug="ledger")
    assert tenant.member_groups == ["ledger-devs", "ledger-contractors"]
    assert tenant.budget_memory_mib == 8192
    assert tenant.gitops_credentials == "ghp_secret_token_value"
    assert tenant.commit_link("abc") == "https://git.example.com/ledger/deploy/commit/abc"
    event = AuditEvent.objects.get(action="tenant.onboard")
    assert "ghp_secret_token_value" not in str(event.after)


def test_onboarding_refuses_a_commit_link_without_its_placeholder(client, world):
    client.force_login(world["admin"])
    page = client.post(
        "/tenants/new/",
        {
            "slug": "ledger",
            "name": "Ledger team",
            "branch": "main",
            "engine": "argocd",
            "commit_url": "https://git.example.com/ledger/deploy/commit/",
            "cpu": "4",
            "memory": "8Gi",
            "storage": "50Gi",
            "namespaces": 5,
        },
    ).content.decode()
    assert "must hold {sha} once" in page
    assert not Tenant.objects.filter(slug="ledger").exists()


def test_onboarding_refuses_a_clashing_prefix_and_keeps_what_was_typed(client, world):
    client.force_login(world["admin"])
    page = client.post(
        "/tenants/new/",
        {
            "slug": "payments-eu",
            "name": "Payments EU",
            "branch": "main",
            "engine": "argocd",
            "cpu": "4",
            "memory": "8Gi",
            "storage": "50Gi",
            "namespaces": 5,
        },
    ).content.decode()
    assert "share a namespace prefix" in page
    assert 'value="Payments EU"' in page
    assert not Tenant.objects.filter(slug="payments-eu").exists()


@pytest.mark.parametrize("rows", [1, 8])
def test_audit_query_count_stays_flat(client, world, django_assert_max_num_queries, rows):
    for index in range(rows):
        submit(world, app=f"app{index}")
    client.force_login(world["admin"])
    with django_assert_max_num_queries(8):
        assert client.get("/audit/").status_code == 200


def test_queue_costs_one_plan_review_per_row_and_no_more(client, world):
    """Every row of the queue can be approved where it stands, so each reads its plan's inputs
    afresh to bind the digest it shows (a plan that moves must not be approved unseen): a
    fixed cost per row, bounded by the page size, and nothing else that grows."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client.force_login(world["admin"])

    def queue_queries() -> int:
        with CaptureQueriesContext(connection) as queries:
            assert client.get("/approvals/").status_code == 200
        return len(queries)

    submit(world, app="app0")
    one = queue_queries()
    for index in range(1, 5):
        submit(world, app=f"app{index}")
    five = queue_queries()
    for index in range(5, 9):
        submit(world, app=f"app{index}")
    nine = queue_queries()

    per_row = (five - one) // 4
    assert five - one == 4 * per_row and nine - five == 4 * per_row  # linear, no N+1 on top
    assert per_row <= 7  # the plan's inputs: tier, cluster, claims, namespaces, project
    assert one - per_row <= 8  # the page itself: session, user, count, the rows


def test_auto_approved_request_needs_no_queue(world):
    tenancy_request = submit(world, tier="dev")
    assert tenancy_request.state == RequestState.APPROVED
    assert approve_if_needed(tenancy_request, approver=world["admin"]) == tenancy_request


def test_approving_a_plan_that_changed_since_the_page_was_read_approves_nothing(client, world):
    tenancy_request = submit(world)
    client.force_login(world["admin"])
    page = client.get(f"/requests/{tenancy_request.pk}/").content.decode()
    digest = page.split('name="plan_digest" value="')[1].split('"')[0]
    # Meanwhile a platform admin tightens the prod tier's Pod Security: the plan changes.
    EnvironmentTier.objects.filter(slug="prod").update(pod_security_level="baseline")

    response = client.post(
        f"/requests/{tenancy_request.pk}/approve/", {"plan_digest": digest}, follow=True
    )

    assert "moved since you opened this page" in response.content.decode()
    tenancy_request.refresh_from_db()
    assert tenancy_request.state == RequestState.SUBMITTED
    assert not tenancy_request.approvals.exists()
