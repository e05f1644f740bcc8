"""Request, namespace and tenant pages: what people see, and who may see it."""

import pytest

from provisioning import jobs
from tenants import demo, services
from tenants.choices import RequestState
from tenants.errors import DomainError, NotAllowed
from tenants.models import Cluster, EnvironmentTier, Namespace, Project, Request, Tenant, User
from tenants.selectors import review
from tests.support.factories import TenantFactory


@pytest.fixture
def world(db):
    demo.seed(sandbox_api_url="http://127.0.0.1:9")  # nothing listens: provisioning fails
    return {
        "tenant": Tenant.objects.get(slug="payments"),
        "developer": User.objects.get(username="dev"),
        "admin": User.objects.get(username="pat"),
        "outsider": User.objects.get(username="sam"),  # a developer of the search tenant
    }


@pytest.fixture
def submitted(world) -> Request:
    """A prod namespace: the default policy has a platform admin decide it."""
    return services.submit_request(
        tenant=world["tenant"],
        kind="namespace",
        requester=world["developer"],
        payload={"app": "shop", "tier": "prod", "cluster": "sandbox", "cpu": "1", "memory": "1Gi"},
    )


def dev_tier() -> EnvironmentTier:
    return EnvironmentTier.objects.get(slug="dev")


def sandbox_cluster() -> Cluster:
    return Cluster.objects.get(name="sandbox")


def approve(world, tenancy_request) -> Request:
    return services.approve_request(
        request_id=tenancy_request.pk,
        approver=world["admin"],
        plan_digest=review(tenancy_request).digest,
    )


def test_requester_sees_the_plan_and_history_of_their_request(client, world, submitted):
    client.force_login(world["developer"])
    page = client.get(f"/requests/{submitted.pk}/").content.decode()

    assert "kind: ResourceQuota" in page
    assert review(submitted).digest in page
    assert "submitted the request" in page
    assert "Retry provisioning" not in page


@pytest.mark.parametrize("path", ["/requests/{pk}/", "/requests/{pk}/progress/"])
def test_member_of_another_tenant_gets_404(client, world, submitted, path):
    client.force_login(world["outsider"])
    assert client.get(path.format(pk=submitted.pk)).status_code == 404


def test_other_tenants_namespace_and_tenant_pages_are_404(client, world):
    namespace = Namespace.objects.create(
        name="payments-shop-dev",
        tenant=world["tenant"],
        tier=dev_tier(),
        cluster=sandbox_cluster(),
        cpu_millis=1000,
        memory_mib=1024,
    )
    client.force_login(world["outsider"])
    assert client.get(f"/namespaces/{namespace.pk}/").status_code == 404
    assert client.get("/tenants/payments/").status_code == 404
    assert client.get("/tenants/search/").status_code == 200


def test_progress_polls_while_approved_and_stops_when_finished(client, world, submitted, settings):
    settings.BERTH_OUTAGE_DEADLINE_SECONDS = 3600
    approve(world, submitted)
    client.force_login(world["developer"])
    assert 'data-poll="' in client.get(f"/requests/{submitted.pk}/progress/").content.decode()

    jobs.converge(request_id=submitted.pk, worker="w")  # cluster unreachable → waits
    fragment = client.get(f"/requests/{submitted.pk}/progress/").content.decode()
    assert 'data-poll="' in fragment  # still moving, by itself
    assert "Waiting: sandbox: cluster unreachable" in fragment
    assert "next try at" in fragment and "nothing is lost" in fragment

    settings.BERTH_OUTAGE_DEADLINE_SECONDS = 0  # past its deadline, the next try gives up
    Request.objects.filter(pk=submitted.pk).update(lease_expires_at=None)
    jobs.converge(request_id=submitted.pk, worker="w")

    fragment = client.get(f"/requests/{submitted.pk}/progress/").content.decode()
    assert "data-poll=" not in fragment
    assert "cluster unreachable" in fragment and "Waiting:" not in fragment
    assert "failed" in fragment


def test_only_platform_admins_get_and_may_use_the_retry_button(client, world, submitted):
    approve(world, submitted)
    jobs.converge(request_id=submitted.pk, worker="w")
    client.force_login(world["developer"])
    assert "Retry provisioning" not in client.get(f"/requests/{submitted.pk}/").content.decode()
    assert client.post(f"/requests/{submitted.pk}/retry/").status_code == 403

    client.force_login(world["admin"])
    assert "Retry provisioning" in client.get(f"/requests/{submitted.pk}/").content.decode()
    response = client.post(f"/requests/{submitted.pk}/retry/")

    assert response.status_code == 302
    submitted.refresh_from_db()
    assert submitted.state == RequestState.PROVISIONING
    assert submitted.runs.count() == 2


def test_namespace_page_shows_drift_findings(client, world):
    namespace = Namespace.objects.create(
        name="payments-shop-dev",
        tenant=world["tenant"],
        tier=dev_tier(),
        cluster=sandbox_cluster(),
        cpu_millis=1000,
        memory_mib=1024,
        state="active",
        drift=[
            {
                "object": "NetworkPolicy/payments-shop-dev/berth-allow-dns",
                "status": "missing",
                "detail": "",
            }
        ],
        drift_checked_at="2026-11-22T10:00:00Z",
    )
    client.force_login(world["developer"])
    page = client.get(f"/namespaces/{namespace.pk}/").content.decode()
    assert "NetworkPolicy/payments-shop-dev/berth-allow-dns" in page
    assert "missing" in page


@pytest.mark.parametrize("rows", [1, 8])
def test_tenant_page_query_count_does_not_grow_with_rows(
    client, world, django_assert_max_num_queries, rows
):
    tenant = TenantFactory(slug="busy")
    world["tenant"].budget_namespaces = 50  # room for a namespace per environment too
    world["tenant"].save(update_fields=["budget_namespaces"])
    for index in range(rows):
        Namespace.objects.create(
            name=f"busy-app{index}-dev",
            tenant=tenant,
            tier=dev_tier(),
            cluster=sandbox_cluster(),
            cpu_millis=100,
            memory_mib=128,
        )
        services.submit_request(
            tenant=world["tenant"],
            kind="namespace",
            requester=world["developer"],
            payload={
                "app": f"a{index}",
                "tier": "dev",
                "cluster": "sandbox",
                "cpu": "100m",
                "memory": "128Mi",
            },
        )
        Project.objects.create(tenant=world["tenant"], name=f"p{index}")
        services.submit_request(
            tenant=world["tenant"],
            kind="ephemeral",
            requester=world["developer"],
            payload={
                "project": f"p{index}",
                "env_slug": f"review-{index}",
                "cpu": "100m",
                "memory": "128Mi",
            },
        )
    client.force_login(world["admin"])
    # 10: the ephemeral environments card is one query (select_related), whatever its rows;
    # the namespaces using most of the budget another; the costs section three (its
    # namespaces, the clusters' prices, its environments' expiries).
    with django_assert_max_num_queries(13):
        assert client.get("/tenants/busy/").status_code == 200
    with django_assert_max_num_queries(13):
        assert client.get("/tenants/payments/").status_code == 200


def test_plan_preview_shows_the_gitops_diff_against_the_tenants_repo(client, world, tmp_path):
    from tests.support.gitserver import init_bare

    bare = init_bare(tmp_path / "payments.git")
    Tenant.objects.filter(slug="payments").update(gitops_repo_url=f"file://{bare}")
    tenancy_request = services.submit_request(
        tenant=Tenant.objects.get(slug="payments"),
        kind="namespace",
        requester=world["developer"],
        payload={"app": "shop", "tier": "prod", "cluster": "sandbox", "cpu": "1", "memory": "1Gi"},
    )
    client.force_login(world["admin"])
    page = client.get(f"/requests/{tenancy_request.pk}/").content.decode()

    assert "What approval will commit" in page
    assert "+++ b/apps/shop/prod/" in page


def test_plan_preview_explains_an_unreadable_repository(client, world, submitted, tmp_path):
    Tenant.objects.filter(slug="payments").update(gitops_repo_url=f"file://{tmp_path}/missing.git")
    client.force_login(world["admin"])
    page = client.get(f"/requests/{submitted.pk}/").content.decode()
    assert "The tenant&#x27;s repository could not be read" in page


# --- the whole page follows its request, with one poll ---------------------------------------


def fragment(client, tenancy_request, digest: str = "") -> str:
    response = client.get(f"/requests/{tenancy_request.pk}/progress/", {"digest": digest})
    assert response.status_code == 200
    return response.content.decode()


def part(html: str, element_id: str) -> str:
    """The element of `html` with this id, as text from its start tag to the next part."""
    start = html.index(f'id="{element_id}"')
    ends = [
        html.find(f'id="{other}"', start + 1)
        for other in ("progress", "request-header", "request-actions", "history", "gitops")
    ]
    return html[start : min([end for end in ends if end > 0] or [len(html)])]


def to_approved(world, submitted, settings) -> Request:
    return approve(world, submitted)


def to_provisioning(world, submitted, settings) -> Request:
    settings.BERTH_OUTAGE_DEADLINE_SECONDS = 3600
    approve(world, submitted)
    jobs.converge(request_id=submitted.pk, worker="w")  # the cluster does not answer: waits
    return submitted


def to_ready(world, submitted, settings) -> Request:
    approve(world, submitted)
    # As a worker leaves it (no cluster here to provision on).
    Request.objects.filter(pk=submitted.pk).update(state=RequestState.READY, status_message="")
    return submitted


def to_failed(world, submitted, settings) -> Request:
    settings.BERTH_OUTAGE_DEADLINE_SECONDS = 0  # the cluster does not answer: gives up
    approve(world, submitted)
    jobs.converge(request_id=submitted.pk, worker="w")
    return submitted


def to_rejected(world, submitted, settings) -> Request:
    return services.reject_request(
        request_id=submitted.pk, approver=world["admin"], reason="Use the shared prod namespace."
    )


def to_cancelled(world, submitted, settings) -> Request:
    return services.cancel_request(request_id=submitted.pk, actor=world["developer"])


def to_decommissioned(world, submitted, settings) -> Request:
    approve(world, submitted)
    Request.objects.filter(pk=submitted.pk).update(state=RequestState.DECOMMISSIONED)
    return submitted


# state reached, what the header's badge says, whether the page keeps asking, the decision
# row, the last history entry, whether the requester is offered "Cancel this request".
STATES = [
    (None, "Awaiting approval", True, None, "submitted the request", True),
    (to_approved, "Approved", True, "Approved by Pat Platform", "approved the request", False),
    (
        to_provisioning,
        "Provisioning",
        True,
        "Approved by Pat Platform",
        "started provisioning",
        False,
    ),
    (to_ready, "Ready", False, "Approved by Pat Platform", "approved the request", False),
    (to_failed, "Failed", False, "Approved by Pat Platform", "stopped provisioning: failed", False),
    (
        to_rejected,
        "Rejected",
        False,
        "Rejected by Pat Platform: “Use the shared prod",
        "rejected the request",
        False,
    ),
    (to_cancelled, "Cancelled", False, None, "cancelled the request", False),
    (
        to_decommissioned,
        "Decommissioned",
        False,
        "Approved by Pat Platform",
        "approved the request",
        False,
    ),
]


@pytest.mark.parametrize(
    ("reach", "badge", "moving", "decision", "history", "cancel"),
    STATES,
    ids=[row[1] for row in STATES],
)
def test_the_poll_brings_the_header_decisions_history_and_actions_of_each_state(
    client, world, submitted, settings, reach, badge, moving, decision, history, cancel
):
    if reach:
        reach(world, submitted, settings)
    client.force_login(world["developer"])
    answer = fragment(client, submitted)

    assert answer.lstrip().startswith('<section id="progress"')  # the poll's own element first
    header = part(answer, "request-header")
    assert f'data-testid="request-state">{badge}</span>' in header
    assert ('data-poll="' in answer) is moving
    if decision:
        assert "Decisions" in header and decision in header
    else:
        assert "Decisions" not in header
    assert history in part(answer, "history")
    assert ("Cancel this request" in part(answer, "request-actions")) is cancel
    # What the poll's answer offers, the full page offers too.
    page = client.get(f"/requests/{submitted.pk}/").content.decode()
    assert ("Cancel this request" in page) is cancel
    assert f'data-testid="request-state">{badge}</span>' in page


def test_the_header_says_the_status_line_and_leaves_the_submission_message_behind(
    client, world, submitted
):
    client.force_login(world["developer"])
    awaiting = part(fragment(client, submitted), "request-header")
    assert 'id="request-status"' in awaiting and "Awaiting approval: 0 of 1" in awaiting

    approve(world, submitted)
    approved = part(fragment(client, submitted), "request-header")
    assert "Awaiting approval" not in approved


def test_a_submitted_request_is_announced_without_a_state_that_would_go_stale(client, world):
    client.force_login(world["developer"])
    response = client.post(
        "/tenants/payments/request/namespace/",
        {
            "app": "shop",
            "tier": "prod",
            "cluster": "sandbox",
            "cpu": "1",
            "memory": "1Gi",
        },
        follow=True,
    )
    created = Request.objects.get()
    assert f"Request #{created.pk} submitted." in response.content.decode()
    assert "submitted: awaiting approval" not in response.content.decode()


def test_the_decision_forms_are_kept_while_the_offer_stands_and_go_once_decided(
    client, world, submitted
):
    client.force_login(world["admin"])
    digest = review(submitted).digest
    page = client.get(f"/requests/{submitted.pk}/").content.decode()
    # The page's poll carries the plan it shows, so it can tell an approval already given.
    assert f"/requests/{submitted.pk}/progress/?digest={digest}" in page
    assert 'data-swap-key="decide cancel"' in page and 'id="approve-button"' in page

    waiting = part(fragment(client, submitted, digest), "request-actions")
    assert 'data-swap-key="decide cancel"' in waiting  # the same key: the page keeps its forms

    approve(world, submitted)
    decided = part(fragment(client, submitted, digest), "request-actions")
    assert 'data-swap-key=""' in decided
    assert "Your decision" not in decided and "Cancel this request" not in decided


def test_an_approver_who_approved_this_plan_is_not_offered_to_approve_it_again(
    client, world, submitted
):
    Request.objects.filter(pk=submitted.pk).update(approvals_required=2)
    digest = review(submitted).digest
    approve(world, submitted)
    client.force_login(world["admin"])

    page = client.get(f"/requests/{submitted.pk}/").content.decode()
    assert "Approve this plan" not in page and "Awaiting approval: 1 of 2" in page
    assert "Your decision" not in part(fragment(client, submitted, digest), "request-actions")
    with pytest.raises(DomainError, match="already approved"):
        approve(world, submitted)  # what would have been refused


@pytest.mark.parametrize("rows", [1, 6])
def test_the_poll_answers_in_as_many_queries_however_long_the_history(
    client, world, submitted, django_assert_max_num_queries, rows
):
    Request.objects.filter(pk=submitted.pk).update(approvals_required=rows + 1)
    digest = review(submitted).digest
    for index in range(rows):
        approver = User.objects.create(username=f"admin{index}", is_platform_admin=True)
        services.approve_request(request_id=submitted.pk, approver=approver, plan_digest=digest)
        services.add_comment(
            request_id=submitted.pk, author=world["developer"], body=f"Any news? ({index})"
        )
    client.force_login(world["admin"])
    # Session and user, the request, its run, namespaces, Kargo name, decide (already
    # approved?), approvals, history: nine, whatever the rows.
    with django_assert_max_num_queries(9):
        answer = fragment(client, submitted, digest)
    assert answer.count('class="pill">Approved by') == rows
    client.force_login(world["developer"])
    with django_assert_max_num_queries(9):
        fragment(client, submitted, digest)


# --- what a person may do with a request: one answer ----------------------------------------


def test_the_actions_start_from_the_states_the_services_allow():
    from tenants.selectors.requests import (
        CANCELLABLE_STATES,
        DECIDABLE_STATES,
        RETRYABLE_STATES,
    )
    from tenants.services import TRANSITIONS

    starts = {action: TRANSITIONS[action].sources for action in TRANSITIONS}
    assert starts["approve"] == starts["reject"] == DECIDABLE_STATES
    assert starts["cancel"] == CANCELLABLE_STATES
    assert starts["retry"] == RETRYABLE_STATES


def test_what_each_person_may_do_with_a_submitted_request(world, submitted):
    from tenants.selectors import RequestActions, request_actions

    colleague = User.objects.create(username="colleague")
    world["tenant"].memberships.create(user=colleague, role="developer")
    superuser = User.objects.create(username="root", is_superuser=True)

    assert request_actions(world["developer"], submitted) == RequestActions(cancel=True)
    assert request_actions(world["admin"], submitted) == RequestActions(decide=True, cancel=True)
    assert request_actions(colleague, submitted) == RequestActions()
    assert request_actions(superuser, submitted) == RequestActions(decide=True, cancel=True)


@pytest.mark.parametrize("who", ["developer", "admin", "colleague", "superuser"])
def test_cancel_is_offered_exactly_to_those_the_service_lets_cancel(world, submitted, who):
    from tenants.selectors import request_actions

    people = {
        "colleague": lambda: (
            world["tenant"]
            .memberships.create(user=User.objects.create(username="colleague"), role="developer")
            .user
        ),
        "superuser": lambda: User.objects.create(username="root", is_superuser=True),
    }
    person = people[who]() if who in people else world[who]
    offered = request_actions(person, submitted).cancel
    try:
        services.cancel_request(request_id=submitted.pk, actor=person)
    except NotAllowed:
        allowed = False
    else:
        allowed = True
    assert offered is allowed


def test_retry_is_offered_to_platform_admins_of_a_failed_request_only(world, submitted, settings):
    from tenants.selectors import RequestActions, request_actions

    to_failed(world, submitted, settings)
    submitted.refresh_from_db()
    assert submitted.state == RequestState.FAILED
    assert request_actions(world["admin"], submitted) == RequestActions(retry=True)
    assert request_actions(world["developer"], submitted) == RequestActions()


def test_nothing_is_offered_once_a_request_is_ready(world, submitted, settings):
    from tenants.selectors import RequestActions, request_actions

    to_ready(world, submitted, settings)
    submitted.refresh_from_db()
    for person in (world["developer"], world["admin"]):
        assert request_actions(person, submitted) == RequestActions()


def test_the_api_reports_what_the_page_offers(client, world, submitted):
    Request.objects.filter(pk=submitted.pk).update(approvals_required=2)
    approve(world, submitted)
    client.force_login(world["admin"])
    body = client.get(f"/api/v1/requests/{submitted.pk}/").json()
    # Pat has approved this plan: approving it again would be refused.
    assert body["permissions"] == {"may_decide": False, "may_cancel": True, "may_retry": False}


def test_a_decision_newly_offered_by_the_poll_sends_the_approver_to_review_the_plan(
    client, world, submitted
):
    # A page opened without the decision (here: before the plan it would approve was
    # known) never gets an approve button from the poll, which reads no repository.
    client.force_login(world["admin"])
    actions = part(fragment(client, submitted), "request-actions")
    assert 'data-swap-key="decide cancel"' in actions
    assert "approve-button" not in actions and "plan_digest" not in actions
    assert f'href="/requests/{submitted.pk}/">Open it again</a>' in actions
