"""Approval policy: ordered CEL rules decide who must approve, or approve, or deny."""

import pytest

from tenants import policy, services
from tenants.choices import ApproverRole, PolicyOutcome, RequestState, Role
from tenants.errors import NotAllowed
from tenants.models import Approval, ApprovalRule, AuditEvent, Membership, Request, Tenant
from tests.support.factories import UserFactory
from tests.support.workflow import approve_if_needed


def submit(demo_world, *, tier="dev", kind="namespace", requester=None, **extra):
    payload = {
        "app": "shop",
        "tier": tier,
        "cluster": "sandbox",
        "cpu": "500m",
        "memory": "512Mi",
        **extra,
    }
    return services.submit_request(
        tenant=demo_world["tenant"],
        kind=kind,
        payload=payload,
        requester=requester or demo_world["developer"],
    )


def test_dev_request_within_budget_is_approved_automatically(demo_world):
    tenancy_request = submit(demo_world, tier="dev")

    assert tenancy_request.state == RequestState.APPROVED
    assert tenancy_request.policy_rule == "dev-and-review-auto-approve"
    approval = Approval.objects.get(request=tenancy_request)
    assert approval.approver is None
    assert "dev-and-review-auto-approve" in approval.reason


def test_review_request_is_approved_automatically(demo_world):
    assert submit(demo_world, tier="review").state == RequestState.APPROVED


def test_prod_request_waits_for_a_platform_admin_and_an_owner_cannot_approve_it(demo_world):
    tenancy_request = submit(demo_world, tier="prod")
    assert tenancy_request.state == RequestState.SUBMITTED
    assert tenancy_request.policy_rule == "prod-needs-platform-admin"
    assert tenancy_request.approver_role == ApproverRole.PLATFORM_ADMIN

    with pytest.raises(NotAllowed, match="platform admin"):
        approve_if_needed(tenancy_request, approver=demo_world["owner"])
    assert AuditEvent.objects.filter(
        action="request.approve.refused", actor=demo_world["owner"]
    ).exists()

    assert approve_if_needed(tenancy_request, approver=demo_world["admin"]).state == (
        RequestState.APPROVED
    )


def test_staging_request_may_be_approved_by_a_tenant_owner(demo_world):
    tenancy_request = submit(demo_world, tier="staging")
    assert tenancy_request.policy_rule == "staging-needs-tenant-owner"
    assert approve_if_needed(tenancy_request, approver=demo_world["owner"]).state == (
        RequestState.APPROVED
    )


def test_owner_of_another_tenant_cannot_approve(demo_world):
    tenancy_request = submit(demo_world, tier="staging")
    stranger = UserFactory(username="search-owner")
    Membership.objects.create(
        user=stranger, tenant=Tenant.objects.get(slug="search"), role=Role.OWNER
    )
    with pytest.raises(NotAllowed):
        approve_if_needed(tenancy_request, approver=stranger)


def test_self_approval_is_refused_even_for_a_platform_admin(demo_world):
    tenancy_request = submit(demo_world, tier="prod", requester=demo_world["admin"])
    with pytest.raises(NotAllowed, match="own request"):
        approve_if_needed(tenancy_request, approver=demo_world["admin"])
    tenancy_request.refresh_from_db()
    assert tenancy_request.state == RequestState.SUBMITTED


def test_viewer_is_denied_by_the_default_rule_and_nothing_is_saved(demo_world):
    viewer = UserFactory(username="auditor")
    Membership.objects.create(user=viewer, tenant=demo_world["tenant"], role=Role.VIEWER)

    with pytest.raises(NotAllowed, match="Viewers cannot make requests"):
        submit(demo_world, requester=viewer)

    assert not Request.objects.exists()
    assert AuditEvent.objects.get(action="request.denied").actor == viewer


def test_custom_rule_requiring_two_approvals_waits_for_both(demo_world):
    ApprovalRule.objects.create(
        position=1,
        name="big-prod-needs-two",
        outcome=PolicyOutcome.REQUIRE,
        condition='request.tier == "prod" && request.cpu_millis >= 2000',
        approvals_required=2,
        approver_role=ApproverRole.PLATFORM_ADMIN,
    )
    second_admin = UserFactory(username="pat2", is_platform_admin=True)
    tenancy_request = submit(demo_world, tier="prod", cpu="2")
    assert tenancy_request.policy_rule == "big-prod-needs-two"

    after_one = approve_if_needed(tenancy_request, approver=demo_world["admin"])
    assert after_one.state == RequestState.SUBMITTED
    assert "1 of 2" in after_one.status_message
    after_two = approve_if_needed(after_one, approver=second_admin)
    assert after_two.state == RequestState.APPROVED


def test_custom_deny_rule_refuses_with_its_message(demo_world):
    ApprovalRule.objects.create(
        position=1,
        name="no-big-dev",
        outcome=PolicyOutcome.DENY,
        condition='request.tier == "dev" && request.memory_mib > 4096',
        message="Dev namespaces are small; use staging for load tests.",
    )
    with pytest.raises(NotAllowed, match="use staging for load tests"):
        submit(demo_world, memory="6Gi")


def test_rules_are_evaluated_in_order_first_match_wins(demo_world):
    ApprovalRule.objects.create(
        position=15,
        name="dev-for-owners-only",
        outcome="require",
        condition='request.tier == "dev"',
        approver_role="tenant_owner",
    )
    assert submit(demo_world).policy_rule == "dev-for-owners-only"


@pytest.mark.parametrize(
    ("condition", "message"),
    [
        ("request.tier == ", "does not compile"),
        ('request.teir == "dev"', "may only use these attributes"),
        ("request.cpu_millis + 1", "must be true or false"),
    ],
)
def test_a_rule_that_does_not_compile_is_refused(condition, message):
    with pytest.raises(policy.PolicyError, match=message):
        policy.compile_condition(condition)


def test_every_default_rule_compiles(db):
    assert ApprovalRule.objects.count() >= 5
    for rule in ApprovalRule.objects.all():
        policy.compile_condition(rule.condition)
