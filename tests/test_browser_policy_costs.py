"""The Policy page's "Try before saving" panel and a tenant's costs, in headless Chromium.
The pictures in docs/requests-and-approvals.md and docs/showback.md come from here."""

from __future__ import annotations

import pytest
from axe_playwright_python.sync_playwright import Axe

from tests.browser import docs_screenshot, needs_chromium, signed_in_page

pytestmark = [pytest.mark.browser, needs_chromium]


def serious_violations(page) -> list[str]:  # noqa: ANN001 - playwright Page
    return [v["id"] for v in Axe().run(page).response["violations"]
            if v["impact"] in {"serious", "critical"}]


@pytest.mark.django_db(transaction=True)
def test_an_admin_tries_a_rule_change_sees_what_it_changes_and_saves_it(live_server, browser):
    from tenants import demo, services
    from tenants.models import ApprovalRule, AuditEvent, Request, Tenant, User

    demo.seed(sandbox_api_url="http://127.0.0.1:9")
    payments, developer = Tenant.objects.get(slug="payments"), User.objects.get(username="dev")
    for number in range(3):
        services.submit_request(tenant=payments, kind="namespace", requester=developer,
                                payload={"app": f"shop{number}", "tier": "dev",
                                         "cluster": "sandbox", "cpu": "500m",
                                         "memory": "512Mi"})
    services.submit_request(tenant=payments, kind="namespace", requester=developer,
                            payload={"app": "web", "tier": "staging", "cluster": "sandbox",
                                     "cpu": "1", "memory": "1Gi"})
    # One decided before Berth kept the attributes the rules saw.
    Request.objects.filter(pk=Request.objects.order_by("pk").first().pk).update(
        policy_attributes=None)
    rule = ApprovalRule.objects.get(name="dev-and-review-auto-approve")

    page = signed_in_page(browser, live_server, User.objects.get(username="pat"))
    page.goto(f"{live_server.url}/policy/")
    page.click(f"text={rule.name}")
    page.uncheck("#id_enabled")
    page.select_option("#id_whatif-tenant", "payments")
    page.click("button:has-text('Try before saving')")

    result = page.locator("#whatif-result")
    assert "3 of 4 decided requests would be decided differently" in result.inner_text()
    assert "auto-approved → needs approval" in result.inner_text()
    assert result.locator("tbody tr").count() == 3
    assert "attributes reconstructed" in result.inner_text()
    # The form keeps what was typed: the rule is still unticked, nothing saved yet.
    assert not page.is_checked("#id_enabled")
    assert ApprovalRule.objects.get(pk=rule.pk).enabled
    assert serious_violations(page) == []
    docs_screenshot(page, "policy-whatif", "#try")

    page.click("button:has-text('Save rule')")
    assert f"Rule {rule.name} saved." in page.inner_text(".messages")
    saved = AuditEvent.objects.get(action="policy.rule_saved")
    assert saved.after["what_if"]["counts"] == {"auto_approve_to_require": 3}
