"""The Request state machine: every legal transition works and is audited; every illegal one
raises a clear domain error and changes nothing."""

import pytest

from tenants import services
from tenants.choices import Decision, RequestState, RunState
from tenants.errors import DomainError, IllegalTransition, NotAllowed
from tenants.models import Approval, AuditEvent, Request, Run
from tenants.selectors import review
from tenants.services import lifecycle
from tests.support.factories import RequestFactory, UserFactory

S = RequestState
DIGEST = "a" * 64


@pytest.fixture
def requester(developer):
    return developer


@pytest.fixture
def make_request(tenant, requester):
    def make(state: str = S.SUBMITTED) -> Request:
        tenancy_request = RequestFactory(tenant=tenant, requester=requester)
        Request.objects.filter(pk=tenancy_request.pk).update(state=state)
        return tenancy_request

    return make


def perform(action: str, tenancy_request: Request, *, admin, requester):
    """Call the service behind an action the way its real caller would."""
    run = Run.objects.filter(request=tenancy_request).first() or Run.objects.create(
        request=tenancy_request, plan_digest=DIGEST
    )
    calls = {
        # An approval binds to the plan as it is now (tenants.selectors.review).
        "approve": lambda: services.approve_request(
            request_id=tenancy_request.pk,
            approver=admin,
            plan_digest=review(tenancy_request).digest,
        ),
        "reject": lambda: services.reject_request(
            request_id=tenancy_request.pk, approver=admin, reason="Use the shared namespace."
        ),
        "cancel": lambda: services.cancel_request(request_id=tenancy_request.pk, actor=requester),
        "start_provisioning": lambda: services.start_provisioning(
            request_id=tenancy_request.pk, plan_digest=DIGEST
        ),
        "mark_ready": lambda: services.mark_ready(run=run),
        "mark_failed": lambda: services.mark_failed(run=run, error="quota exceeded"),
        "retry": lambda: services.retry_request(
            request_id=tenancy_request.pk, actor=admin, plan_digest=DIGEST
        ),
        "start_decommission": lambda: services.start_decommission(
            request_id=tenancy_request.pk, actor=requester, reason="no longer needed"
        ),
        "return_to_approval": lambda: services.return_to_approval(
            request_id=tenancy_request.pk, reason="The tier's quota preset changed."
        ),
        "mark_decommissioned": lambda: services.mark_decommissioned(request_id=tenancy_request.pk),
        "await_merge": lambda: services.await_merge(
            request_id=tenancy_request.pk, message="pull request #1 opened for review"
        ),
        "resume_merged": lambda: lifecycle.resume_merged(
            request_id=tenancy_request.pk, message="pull request #1 merged"
        ),
        "return_unmerged": lambda: lifecycle.return_unmerged(
            request_id=tenancy_request.pk, reason="pull request #1 closed without merging"
        ),
    }
    return calls[action]()


LEGAL = [
    (action, source, rule.target)
    for action, rule in services.TRANSITIONS.items()
    for source in sorted(rule.sources)
]
ILLEGAL = [
    (action, state)
    for action, rule in services.TRANSITIONS.items()
    for state in S.values
    if state not in rule.sources
]


def test_lifecycle_matches_the_architecture():
    edges = {(source, target) for _, source, target in LEGAL}
    assert edges == {
        (S.SUBMITTED, S.APPROVED),
        (S.APPROVED, S.SUBMITTED),  # the plan changed after approval
        (S.SUBMITTED, S.REJECTED),
        (S.SUBMITTED, S.CANCELLED),
        (S.APPROVED, S.PROVISIONING),
        (S.PROVISIONING, S.READY),
        (S.PROVISIONING, S.FAILED),
        (S.FAILED, S.PROVISIONING),
        (S.READY, S.DECOMMISSIONING),
        (S.DECOMMISSIONING, S.DECOMMISSIONED),
        # Merge-request mode: the run waits for the forge, then goes on or comes back.
        (S.PROVISIONING, S.AWAITING_MERGE),
        (S.AWAITING_MERGE, S.PROVISIONING),
        (S.AWAITING_MERGE, S.RETURNED),
    }


@pytest.mark.parametrize(("action", "source", "target"), LEGAL)
def test_legal_transition_changes_state_and_writes_audit_event(
    action, source, target, make_request, platform_admin, requester
):
    tenancy_request = make_request(source)

    perform(action, tenancy_request, admin=platform_admin, requester=requester)

    tenancy_request.refresh_from_db()
    assert tenancy_request.state == target
    event = AuditEvent.objects.get(action=f"request.{action}")
    assert event.object_id == str(tenancy_request.pk)
    assert event.tenant_id == tenancy_request.tenant_id
    assert event.before == {"state": source}
    assert event.after["state"] == target


@pytest.mark.parametrize(("action", "state"), ILLEGAL)
def test_illegal_transition_raises_and_changes_nothing(
    action, state, make_request, platform_admin, requester
):
    tenancy_request = make_request(state)
    runs_before = Run.objects.count()

    with pytest.raises(IllegalTransition) as refused:
        perform(action, tenancy_request, admin=platform_admin, requester=requester)

    assert f"Request #{tenancy_request.pk} is" in str(refused.value)
    tenancy_request.refresh_from_db()
    assert tenancy_request.state == state
    assert not AuditEvent.objects.filter(action__startswith="request.").exists()
    assert not Approval.objects.exists()
    assert Run.objects.count() == runs_before + 1  # only the fixture's own run
    assert Run.objects.filter(state=RunState.RUNNING).count() == Run.objects.count()


def test_illegal_transition_message_names_the_state(make_request, platform_admin, requester):
    tenancy_request = make_request(S.REJECTED)
    with pytest.raises(IllegalTransition, match="is rejected; it cannot be approved"):
        perform("approve", tenancy_request, admin=platform_admin, requester=requester)


def test_approval_records_decision_and_plan_digest(make_request, platform_admin, requester):
    tenancy_request = make_request()
    perform("approve", tenancy_request, admin=platform_admin, requester=requester)

    approval = Approval.objects.get(request=tenancy_request)
    assert approval.approver == platform_admin
    assert approval.decision == Decision.APPROVE
    assert approval.plan_digest == review(tenancy_request).digest


def test_nobody_approves_their_own_request(make_request, tenant):
    admin_requester = UserFactory(username="self-approver", is_platform_admin=True)
    tenancy_request = make_request()
    Request.objects.filter(pk=tenancy_request.pk).update(requester=admin_requester)

    with pytest.raises(NotAllowed, match="own request"):
        services.approve_request(
            request_id=tenancy_request.pk, approver=admin_requester, plan_digest=DIGEST
        )

    tenancy_request.refresh_from_db()
    assert tenancy_request.state == S.SUBMITTED
    assert not Approval.objects.exists()
    refusal = AuditEvent.objects.get(action="request.approve.refused")
    assert refusal.actor == admin_requester


def test_member_without_the_right_cannot_approve(make_request, tenant):
    other_member = UserFactory(username="colleague")
    tenancy_request = make_request()

    with pytest.raises(NotAllowed):
        services.approve_request(
            request_id=tenancy_request.pk, approver=other_member, plan_digest=DIGEST
        )

    tenancy_request.refresh_from_db()
    assert tenancy_request.state == S.SUBMITTED
    assert AuditEvent.objects.filter(action="request.approve.refused").count() == 1


def test_rejection_needs_a_reason(make_request, platform_admin):
    tenancy_request = make_request()
    with pytest.raises(DomainError, match="needs a reason"):
        services.reject_request(request_id=tenancy_request.pk, approver=platform_admin, reason=" ")
    tenancy_request.refresh_from_db()
    assert tenancy_request.state == S.SUBMITTED


def test_only_requester_or_admin_may_cancel(make_request):
    tenancy_request = make_request()
    stranger = UserFactory(username="stranger")
    with pytest.raises(NotAllowed):
        services.cancel_request(request_id=tenancy_request.pk, actor=stranger)
    tenancy_request.refresh_from_db()
    assert tenancy_request.state == S.SUBMITTED


def test_failed_run_keeps_the_error_and_retry_opens_a_new_run(make_request, platform_admin):
    tenancy_request = make_request(S.APPROVED)
    run = services.start_provisioning(request_id=tenancy_request.pk, plan_digest=DIGEST)
    services.mark_failed(run=run, error="namespaces is forbidden")

    run.refresh_from_db()
    assert run.state == RunState.FAILED
    assert run.error == "namespaces is forbidden"
    assert run.finished_at is not None

    retry = services.retry_request(
        request_id=tenancy_request.pk, actor=platform_admin, plan_digest=DIGEST
    )
    assert retry.pk != run.pk
    tenancy_request.refresh_from_db()
    assert tenancy_request.state == S.PROVISIONING


def test_members_cannot_retry(make_request, requester):
    tenancy_request = make_request(S.FAILED)
    with pytest.raises(NotAllowed):
        services.retry_request(request_id=tenancy_request.pk, actor=requester, plan_digest=DIGEST)
