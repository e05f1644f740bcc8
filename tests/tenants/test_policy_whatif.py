"""Policy what-if: a proposed rule set replayed over past decisions, with the attributes
each request had when it was decided, on the Policy page and at POST
/api/v1/policy/what-if/; nothing saved but, on the save of that exact proposal, the summary
in the audit event.

The demo world's default rules: dev/review approve automatically, staging needs a tenant
owner, prod a platform admin, viewers are denied."""

from __future__ import annotations

import pytest
from django.core.cache import cache

from tenants import whatif
from tenants.choices import Role
from tenants.errors import NotAllowed
from tenants.models import ApprovalRule, AuditEvent, Membership, Request
from tenants.selectors import rules_in_force
from tests.support.api import api, assert_problem, submit
from tests.support.workflow import ask_for_project

WHATIF = "/api/v1/policy/what-if/"


def rule_rows(rules=None) -> list[dict]:
    """A rule set in the API's shape: the rules in force unless given."""
    return [
        {
            "name": rule.name,
            "condition": rule.condition,
            "outcome": rule.outcome,
            "approvals_required": rule.approvals_required,
            "approver_role": rule.approver_role,
            "message": rule.message,
            "enabled": rule.enabled,
        }
        for rule in (rules or rules_in_force())
    ]


def without(name: str) -> list[dict]:
    return [row for row in rule_rows() if row["name"] != name]


def changed(name: str, **fields) -> list[dict]:
    return [{**row, **fields} if row["name"] == name else row for row in rule_rows()]


def try_rules(api_world, rules, **filters):
    response = api(api_world.admin).post(WHATIF, {"rules": rules, **filters}, format="json")
    assert response.status_code == 200, response.content[:800]
    return response.json()


# --- what is kept at decision time -------------------------------------------------------


def test_a_request_keeps_the_attributes_the_rules_saw_when_they_decided(api_world):
    kept = submit(api_world, tier="prod").policy_attributes

    assert kept["tier"] == "prod" and kept["tiers"] == ["prod"]
    assert kept["requester"] == "dev" and kept["requester_role"] == Role.MEMBER
    assert kept["cpu_millis"] == 500 and kept["memory_mib"] == 512


def test_a_denial_keeps_the_attributes_in_its_audit_event(api_world):
    with pytest.raises(NotAllowed):
        submit(api_world, requester=api_world.viewer)

    event = AuditEvent.objects.get(action="request.denied")
    assert event.after["attributes"]["requester_role"] == Role.VIEWER


# --- what a proposal would change --------------------------------------------------------


def test_dropping_the_auto_approval_lists_every_request_it_approved(api_world):
    automatic = [submit(api_world, tier="dev", app=f"app{n}") for n in range(3)]
    held = submit(api_world, tier="prod", app="big")

    answer = try_rules(api_world, without("dev-and-review-auto-approve"))

    assert answer["counts"] == {"auto_approve_to_require": 3}
    assert sorted(change["request"] for change in answer["changes"]) == sorted(
        request.pk for request in automatic
    )
    assert held.pk not in [change["request"] for change in answer["changes"]]
    [first] = answer["changes"][:1]
    assert first["before"]["outcome"] == "auto_approve"
    assert first["after"]["rule"] == "everything-else-needs-platform-admin"
    assert first["change_label"] == "auto-approved → needs approval"
    # Nothing was saved: the rules in force are as they were.
    assert ApprovalRule.objects.filter(name="dev-and-review-auto-approve").exists()


def test_a_new_deny_rule_and_a_changed_approver_are_counted_apart(api_world):
    submit(api_world, tier="prod", app="one")
    submit(api_world, tier="staging", app="two")
    rules = changed("staging-needs-tenant-owner", approver_role="platform_admin")
    rules.insert(
        0,
        {
            "name": "no-prod",
            "condition": '"prod" in request.tiers',
            "outcome": "deny",
            "message": "No prod this week.",
        },
    )

    answer = try_rules(api_world, rules)

    assert answer["counts"] == {"require_to_deny": 1, "approver_changed": 1}
    by_change = {change["change"]: change for change in answer["changes"]}
    assert by_change["approver_changed"]["after"]["words"] == "needs 1 × platform admin"
    assert by_change["require_to_deny"]["after"]["rule"] == "no-prod"


def test_lifting_the_viewer_denial_shows_the_denied_requests_it_would_let_through(api_world):
    with pytest.raises(NotAllowed):
        submit(api_world, requester=api_world.viewer, tier="prod")

    answer = try_rules(api_world, without("viewers-cannot-request"))

    assert answer["counts"] == {"deny_to_require": 1}
    [change] = answer["changes"]
    assert change["request"] is None
    assert change["audit_event"] == AuditEvent.objects.get(action="request.denied").pk


def test_the_replay_reads_the_role_the_requester_had_when_it_was_decided(api_world):
    submit(api_world, tier="dev")
    # Promoted to viewer-only since: today's role would be denied, the one then was not.
    Membership.objects.filter(user=api_world.member, tenant=api_world.payments).update(
        role=Role.VIEWER
    )

    answer = try_rules(api_world, rule_rows())

    assert answer["changed"] == 0


def test_older_requests_are_replayed_on_attributes_reconstructed_and_marked(api_world):
    old = submit(api_world, tier="dev")
    Request.objects.filter(pk=old.pk).update(policy_attributes=None)

    answer = try_rules(api_world, without("dev-and-review-auto-approve"))

    assert answer["reconstructed"] == 1
    [change] = answer["changes"]
    assert change["request"] == old.pk and change["attributes_reconstructed"] is True


def test_a_condition_that_fails_on_a_past_request_is_reported_not_raised(api_world):
    ask_for_project(
        api_world.payments,
        api_world.owner,
        app="checkout",
        engine="argocd",
        tiers=("dev", "staging"),
    )
    rules = rule_rows()
    # Compiles and holds on the sample (one tier); fails on a project (two tiers).
    rules.insert(
        0,
        {
            "name": "odd",
            "outcome": "require",
            "condition": 'size(request.tiers) < 2 || request.tiers[5] == "x"',
        },
    )

    answer = try_rules(api_world, rules)

    assert answer["counts"].get("error") == 1
    assert "odd" in answer["changes"][0]["error"]


def test_filters_narrow_the_requests_replayed(api_world):
    submit(api_world, tier="dev", app="a")
    submit(api_world, tier="dev", app="b")
    submit(api_world, tier="dev", app="c", tenant=api_world.search, requester=api_world.outsider)
    rules = without("dev-and-review-auto-approve")

    assert try_rules(api_world, rules)["changed"] == 3
    assert try_rules(api_world, rules, tenant="search")["changed"] == 1
    assert try_rules(api_world, rules, kind="project")["changed"] == 0
    assert try_rules(api_world, rules, limit=2)["considered"] == 2
    assert try_rules(api_world, rules, since="2999-01-01T00:00:00Z")["considered"] == 0


# --- validation and rights ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        (
            {"rules": [{"name": "x", "condition": "request.nope ==", "outcome": "require"}]},
            "rules.0.condition",
            "does not compile",
        ),
        (
            {"rules": [{"name": "x", "condition": "true", "outcome": "deny"}]},
            "rules.0.message",
            "needs a message",
        ),
        (
            {"rules": [{"name": "x", "condition": "true", "outcome": "maybe"}]},
            "rules.0.outcome",
            "not a valid choice",
        ),
        (
            {"rules": [{"name": "x y", "condition": "true", "outcome": "require"}]},
            "rules.0.name",
            "",
        ),
        (
            {"rules": [{"name": "x", "condition": "true", "outcome": "require"}] * 2},
            "rules",
            "named more than once",
        ),
        ({"rules": "everything"}, "rules.non_field_errors", "Expected a list"),
        ({"rules": [], "limit": 501}, "limit", "500"),
        ({"rules": [], "limit": 0}, "limit", ""),
        ({"rules": [], "tenant": "nobody"}, "tenant", ""),
        ({"rules": [], "kind": "party"}, "kind", "not a valid choice"),
        ({"rules": [], "since": "last tuesday"}, "since", ""),
        ({}, "rules", "required"),
    ],
)
def test_every_field_is_checked_with_a_clear_error(api_world, body, field, words):
    response = api(api_world.admin).post(WHATIF, body, format="json")

    errors = assert_problem(response, 400, "validation-error")["errors"]
    assert field in errors, errors
    assert words in " ".join(errors[field])
    assert cache.get(f"policy-whatif:{whatif.proposal_digest([])}") is None


@pytest.mark.parametrize("who", ["owner", "member"])
def test_only_platform_admins_may_try_rules(api_world, who):
    response = api(getattr(api_world, who)).post(WHATIF, {"rules": rule_rows()}, format="json")
    assert_problem(response, 403)


def test_an_admins_token_needs_the_admin_scope(api_world):
    response = api(api_world.admin, scopes=("read", "approve")).post(
        WHATIF, {"rules": rule_rows()}, format="json"
    )
    assert_problem(response, 403)


# --- the Policy page ---------------------------------------------------------------------


def rule_form(rule: ApprovalRule, **fields) -> dict:
    return {
        "position": rule.position,
        "name": rule.name,
        "description": rule.description,
        "condition": rule.condition,
        "outcome": rule.outcome,
        "approvals_required": rule.approvals_required,
        "approver_role": rule.approver_role,
        "message": rule.message,
        "enabled": "on" if rule.enabled else "",
        **fields,
    }


def test_try_before_saving_shows_the_requests_that_would_change_and_saves_nothing(
    api_world, client
):
    automatic = submit(api_world, tier="dev")
    rule = ApprovalRule.objects.get(name="dev-and-review-auto-approve")
    client.force_login(api_world.admin)

    page = client.post(f"/policy/{rule.pk}/", {**rule_form(rule, enabled=""), "try": "1"})

    assert page.status_code == 200
    text = page.content.decode()
    assert "1</strong> of 1 decided request would be decided differently" in text
    assert "auto-approved → needs approval" in text
    assert f'href="/requests/{automatic.pk}/"' in text
    assert ApprovalRule.objects.get(pk=rule.pk).enabled is True
    assert not AuditEvent.objects.filter(action="policy.rule_saved").exists()


def test_the_page_says_when_attributes_were_reconstructed(api_world, client):
    old = submit(api_world, tier="dev")
    Request.objects.filter(pk=old.pk).update(policy_attributes=None)
    rule = ApprovalRule.objects.get(name="dev-and-review-auto-approve")
    client.force_login(api_world.admin)

    page = client.post(f"/policy/{rule.pk}/", {**rule_form(rule, enabled=""), "try": "1"})

    assert "attributes reconstructed" in page.content.decode()


def test_saving_the_proposal_just_tried_records_the_what_if_in_the_audit_event(api_world, client):
    submit(api_world, tier="dev")
    rule = ApprovalRule.objects.get(name="dev-and-review-auto-approve")
    client.force_login(api_world.admin)
    client.post(f"/policy/{rule.pk}/", {**rule_form(rule, enabled=""), "try": "1"})

    client.post(f"/policy/{rule.pk}/", rule_form(rule, enabled=""))

    event = AuditEvent.objects.get(action="policy.rule_saved")
    assert event.after["what_if"]["counts"] == {"auto_approve_to_require": 1}
    assert event.after["what_if"]["by"] == "pat"


def test_saving_another_proposal_than_the_one_tried_records_no_what_if(api_world, client):
    rule = ApprovalRule.objects.get(name="dev-and-review-auto-approve")
    client.force_login(api_world.admin)
    client.post(f"/policy/{rule.pk}/", {**rule_form(rule, enabled=""), "try": "1"})

    client.post(f"/policy/{rule.pk}/", rule_form(rule, message="edited after trying"))

    assert "what_if" not in AuditEvent.objects.get(action="policy.rule_saved").after


def test_a_what_if_tried_through_the_api_is_found_by_the_page_save(api_world, client):
    rule = ApprovalRule.objects.get(name="dev-and-review-auto-approve")
    rows = changed(rule.name, enabled=False)
    try_rules(api_world, rows)
    client.force_login(api_world.admin)

    client.post(f"/policy/{rule.pk}/", rule_form(rule, enabled=""))

    assert AuditEvent.objects.get(action="policy.rule_saved").after["what_if"]["considered"] == 0


def test_the_page_refuses_a_bad_limit_and_replays_nothing(api_world, client):
    rule = ApprovalRule.objects.get(name="dev-and-review-auto-approve")
    client.force_login(api_world.admin)

    page = client.post(
        f"/policy/{rule.pk}/", {**rule_form(rule), "try": "1", "whatif-limit": "5000"}
    )

    assert "Ensure this value is less than or equal to 500" in page.content.decode()
    assert "would be decided differently" not in page.content.decode()


def test_members_cannot_open_the_policy_pages(api_world, client):
    rule = ApprovalRule.objects.get(name="dev-and-review-auto-approve")
    client.force_login(api_world.member)

    assert client.post(f"/policy/{rule.pk}/", {**rule_form(rule), "try": "1"}).status_code == 403
