"""The approval policy's pages, for platform admins only: a rule that does not compile
is refused at save, and a saved rule decides the next request."""

from tenants.models import ApprovalRule, AuditEvent
from tests.support.tenants_pages import submit


def test_a_rule_that_does_not_compile_is_refused_at_save(client, demo_world):
    client.force_login(demo_world["admin"])
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


def test_admin_adds_a_rule_and_it_decides_the_next_request(client, demo_world):
    client.force_login(demo_world["admin"])
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
    assert submit(demo_world).policy_rule == "prod-needs-two"


def test_only_platform_admins_see_the_policy_pages(client, demo_world):
    client.force_login(demo_world["owner"])
    assert client.get("/policy/").status_code == 403
    assert client.post("/policy/new/", {"name": "x"}).status_code == 403
