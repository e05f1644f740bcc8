"""A request from the form to Ready and a queue decided from its rows, as people do it in
headless Chromium: the form's starting tier, people's units, the history and the commit
appearing without a reload, links to what was made, inline and bulk approval."""

import re

import pytest

from provisioning import reconcile
from tenants.models import Request, Tenant, User
from tests.support.browser import docs_screenshot, needs_chromium, signed_in_page
from tests.support.cluster import seed_demo, stand_in
from tests.support.gitserver import GitDaemon, init_bare
from tests.support.workflow import ask_for_namespace

pytestmark = [pytest.mark.browser, needs_chromium]


@pytest.fixture
def sandbox():
    with stand_in() as running:
        yield running


@pytest.fixture
def git_daemon(tmp_path):
    with GitDaemon(tmp_path) as daemon:
        yield daemon


@pytest.mark.django_db(transaction=True)
def test_request_reaches_ready_with_links_and_history_live(
    live_server, browser, sandbox, git_daemon
):
    seed_demo(sandbox)
    init_bare(git_daemon.base / "payments.git")
    Tenant.objects.filter(slug="payments").update(
        gitops_repo_url=git_daemon.url("payments.git"),
        gitops_commit_url="https://forge.example/payments/gitops/commit/{sha}",
    )
    developer = signed_in_page(browser, live_server, User.objects.get(username="dev"))
    admin = signed_in_page(browser, live_server, User.objects.get(username="pat"))

    # The form starts on a tier meant to stay, not on the review-app tier.
    developer.goto(f"{live_server.url}/tenants/payments/request/namespace/")
    selected = developer.locator("#id_tier option:checked").inner_text()
    assert "ephemeral" not in selected.lower()
    developer.select_option("#id_tier", "prod")
    developer.fill("#id_app", "shop")
    developer.fill("#id_cpu", "1")
    developer.fill("#id_memory", "2Gi")
    developer.click("form.form button[type=submit]")
    developer.wait_for_url(re.compile(r"/requests/\d+/$"))
    tenancy_request = Request.objects.get()

    facts = developer.locator("dl.facts").inner_text()
    assert "cpu: 1 core" in facts and "memory: 2Gi" in facts and "cpu_millis" not in facts
    assert "What approval will commit" in developer.locator("#gitops").inner_text()

    # The admin approves from the queue's row; the developer's page hears of it by itself.
    admin.goto(f"{live_server.url}/approvals/")
    row = admin.locator(f"#queue-row-{tenancy_request.pk}")
    assert "cpu: 1 core" in row.inner_text()
    row.get_by_role("button", name=f"Approve request #{tenancy_request.pk}").click()
    admin.wait_for_selector(".message-success")
    assert "/approvals/" in admin.url

    developer.locator("#history li", has_text="approved the request").wait_for(timeout=10_000)
    reconcile.converge(request_id=tenancy_request.pk, worker="browser-test")
    developer.wait_for_selector("#progress .state-ready", timeout=10_000)

    # Without a reload: the namespace it made, the commit it pushed, the whole history.
    namespace_link = developer.locator("#progress .created a")
    assert namespace_link.inner_text() == "payments-shop-prod"
    gitops = developer.locator("#gitops")
    gitops.locator("p.committed").wait_for(timeout=10_000)
    sha = tenancy_request.git_commits.get().sha
    assert gitops.locator("a").first.get_attribute("href") == (
        f"https://forge.example/payments/gitops/commit/{sha}"
    )
    assert "What approval will commit" not in gitops.inner_text()
    assert "finished provisioning: ready" in developer.locator("#history").inner_text()
    docs_screenshot(developer, "request-page")

    namespace_link.click()
    developer.wait_for_url(re.compile(r"/namespaces/\d+/$"))
    assert "CPU 1 core · memory 2Gi" in developer.locator("dl.facts").first.inner_text()


@pytest.mark.django_db(transaction=True)
def test_queue_approves_selected_requests_together(live_server, browser, sandbox):
    seed_demo(sandbox)
    tenant = Tenant.objects.get(slug="payments")
    developer = User.objects.get(username="dev")
    made = [
        ask_for_namespace(tenant, developer, app=app, tier="prod", cpu=cpu, memory=memory)
        for app, cpu, memory in (
            ("shop", "1", "2Gi"),
            ("cart", "500m", "512Mi"),
            ("till", "2", "4Gi"),
        )
    ]
    staging = ask_for_namespace(
        tenant, developer, app="shop", tier="staging", cpu="1", memory="1Gi"
    )
    # The default rules send staging to a tenant owner: another policy outcome than prod's.
    assert staging.policy_rule == "staging-needs-tenant-owner"
    assert made[0].policy_rule == "prod-needs-platform-admin"
    admin = signed_in_page(browser, live_server, User.objects.get(username="pat"))

    admin.goto(f"{live_server.url}/approvals/")
    oldest = admin.locator(f"#queue-row-{made[0].pk}")
    assert "oldest" in oldest.get_attribute("class")
    docs_screenshot(admin, "approval-queue")

    for tenancy_request in made[:2]:
        admin.check(f"#select-{tenancy_request.pk}")
    admin.fill("#id_bulk_note", "sprint 48")
    admin.click("#approve-selected")
    admin.wait_for_selector(".message-success")
    assert f"Approved #{made[0].pk}, #{made[1].pk}." in admin.locator(".messages").inner_text()
    states = dict(Request.objects.values_list("pk", "state"))
    assert [states[r.pk] for r in made] == ["approved", "approved", "submitted"]

    # Requests whose policy outcome differs are not approved together: none of them is.
    admin.check(f"#select-{made[2].pk}")
    admin.check(f"#select-{staging.pk}")
    admin.click("#approve-selected")
    admin.wait_for_selector(".message-error")
    assert "same policy outcome" in admin.locator(".messages").inner_text()
    assert Request.objects.get(pk=made[2].pk).state == "submitted"
    assert Request.objects.get(pk=staging.pk).state == "submitted"

    # Rejecting from the row asks for a reason first.
    admin.goto(f"{live_server.url}/approvals/")
    row = admin.locator(f"#queue-row-{made[2].pk}")
    row.locator("summary").click()
    row.locator(f"#reason-{made[2].pk}").fill("Use the shared till namespace")
    row.get_by_role("button", name=f"Reject request #{made[2].pk}").click()
    admin.wait_for_selector(".message-success")
    assert Request.objects.get(pk=made[2].pk).state == "rejected"
