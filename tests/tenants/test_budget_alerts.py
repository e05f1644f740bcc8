"""Budget alerts: a tenant's owners told once a month, by e-mail and the signed webhook, when
the month's cost passes 80 % and 100 % of the monthly cost alert they set, or what its
namespaces hold passes 80 % and 100 % of its quota budget; checked by beat and as soon as
one of its requests is Ready; shown on its page. Setting the threshold through the API is
tests/tenants/api/test_budget_alerts.py."""

from __future__ import annotations

import hashlib
import hmac
import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
import time_machine
from django.core import mail
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tenants import services
from tenants.models import AuditEvent, BudgetAlert, Tenant
from tests.support.tenants_notifications import Receiver
from tests.support.tenants_showback import HOURLY, NOW, namespace
from tests.support.workflow import approve_if_needed, ask_for_namespace

# At NOW the namespace below has been held 75 hours: EUR 8.35, 83 % of EUR 10.
HELD = timedelta(hours=75)
COST_AT_NOW = (HOURLY * 75).quantize(Decimal("0.01"))


@pytest.fixture
def clock():
    with time_machine.travel(NOW, tick=False) as traveller:
        yield traveller


@pytest.fixture
def payments(api_world, priced, clock):
    """payments holding one namespace since NOW - 75 h, its cost watched at EUR 10."""
    namespace(api_world, created=NOW - HELD)
    Tenant.objects.filter(pk=api_world.payments.pk).update(monthly_cost_alert=Decimal("10"))
    return Tenant.objects.get(pk=api_world.payments.pk)


@pytest.fixture
def check(eager_tasks, django_capture_on_commit_callbacks):
    """Beat's round: every tenant checked, what it tells sent at once."""

    def run():
        before = len(mail.outbox)
        with django_capture_on_commit_callbacks(execute=True):
            services.check_budget_alerts()
        return mail.outbox[before:]

    return run


def test_passing_80_percent_of_the_cost_alert_tells_the_owners_once(api_world, payments, check):
    [told] = check()

    assert told.subject == "[Berth] payments: the month's cost passed 80 % of its threshold"
    assert api_world.owner.email in told.to
    assert api_world.member.email not in told.to
    assert check() == []  # the next round: already told this month
    [alert] = BudgetAlert.objects.filter(tenant=payments)
    assert (alert.measure, alert.percent, alert.month) == ("cost", 80, NOW.date().replace(day=1))
    assert (
        AuditEvent.objects.filter(action="tenant.budget_alert", tenant_id=payments.pk).count() == 1
    )


def test_passing_100_percent_later_in_the_month_tells_once_more(payments, check, clock):
    check()
    clock.move_to(NOW + timedelta(hours=15))  # 90 hours held: EUR 10.02

    [told] = check()

    assert told.subject == "[Berth] payments: the month's cost passed 100 % of its threshold"
    assert "EUR 10.02 of EUR 10.00" in told.body
    assert check() == []
    assert sorted(BudgetAlert.objects.values_list("percent", flat=True)) == [80, 100]


def test_a_cost_past_both_thresholds_at_once_is_told_once_at_100_percent(payments, check):
    Tenant.objects.filter(pk=payments.pk).update(monthly_cost_alert=Decimal("5"))

    [told] = check()

    assert "passed 100 %" in told.subject
    # 80 % is recorded with it: not told later in the month.
    assert sorted(BudgetAlert.objects.values_list("percent", flat=True)) == [80, 100]
    assert check() == []


def test_a_new_month_starts_over(payments, check, clock):
    check()
    clock.move_to(datetime(2026, 12, 3, 23, 0, tzinfo=UTC))  # 71 hours of December: 79 %
    assert check() == []

    clock.move_to(datetime(2026, 12, 4, 0, 0, tzinfo=UTC))  # 72 hours: EUR 8.02, 80 %
    [told] = check()

    assert "passed 80 %" in told.subject
    assert "reached 80 % of its monthly cost alert in December 2026" in told.body
    assert sorted(BudgetAlert.objects.values_list("month", flat=True)) == [
        datetime(2026, 11, 1).date(),
        datetime(2026, 12, 1).date(),
    ]


def test_a_tenant_holding_80_percent_of_its_cpu_budget_is_told(api_world, priced, clock, check):
    namespace(api_world, created=NOW - timedelta(hours=1))  # 2 cores
    Tenant.objects.filter(pk=api_world.payments.pk).update(budget_cpu_millis=2500)

    [told] = check()

    assert told.subject == "[Berth] payments: 80 % of its CPU budget in use"
    assert "2 of its 2.5 cores of CPU in use by its namespaces" in told.body
    # No monthly cost alert is set: the cost is not watched.
    assert list(BudgetAlert.objects.values_list("measure", "percent")) == [("cpu", 80)]


def test_what_requests_only_claim_is_not_counted(api_world, priced, clock, check):
    ask_for_namespace(api_world.payments, api_world.member, app="shop", cpu="2")
    Tenant.objects.filter(pk=api_world.payments.pk).update(budget_cpu_millis=2500)

    assert check() == []
    assert not BudgetAlert.objects.exists()


def test_the_email_and_the_signed_webhook_carry_the_figures(api_world, payments, check, receiver):
    payments.webhook_url, payments.webhook_secret = receiver, "hook-secret"
    payments.save()
    payments.notify_emails = ["finance@example.com"]
    payments.save()

    [told] = check()

    assert "finance@example.com" in told.to
    assert f"EUR {COST_AT_NOW} of EUR 10.00 this month" in told.body
    assert "/tenants/payments/#budget-alerts" in told.body
    [(headers, body)] = Receiver.deliveries
    assert headers["X-Berth-Event"] == "budget.threshold"
    assert headers["X-Berth-Signature"] == (
        "sha256=" + hmac.new(b"hook-secret", body, hashlib.sha256).hexdigest()
    )
    assert json.loads(body)["budget"] == {
        "tenant": "payments",
        "month": "2026-11",
        "measure": "cost",
        "percent": 80,
        "share": 83,
        "amount": str(COST_AT_NOW),
        "limit": "10.00",
        "unit": "EUR",
        "detail": f"EUR {COST_AT_NOW} of EUR 10.00 this month",
        "url": "http://127.0.0.1:8000/tenants/payments/#budget-alerts",
    }


def test_an_alert_another_check_recorded_first_is_not_told_again(payments, check, monkeypatch):
    # Two checks at the same moment both read that nothing was recorded; the other one
    # writes its row first.
    monkeypatch.setattr("tenants.services.budget_alerts.alerts_recorded", lambda *a: set())
    BudgetAlert.objects.create(
        tenant=payments, month=NOW.date().replace(day=1), measure="cost", percent=80, detail="x"
    )

    assert check() == []
    assert BudgetAlert.objects.count() == 1


def test_a_retired_tenant_is_not_watched(payments, check):
    Tenant.objects.filter(pk=payments.pk).update(retired_at=NOW)

    assert check() == []


def test_a_round_reads_every_tenant_in_the_same_number_of_queries(api_world, payments):
    def queries_of_a_round() -> int:
        with CaptureQueriesContext(connection) as queries:
            services.check_budget_alerts()
        return len(queries)

    services.check_budget_alerts()  # what is due is told: the rounds below only read
    one_watched = queries_of_a_round()
    namespace(api_world, "search-api-dev", created=NOW - HELD, tenant=api_world.search)
    Tenant.objects.filter(pk=api_world.search.pk).update(monthly_cost_alert=Decimal("100"))

    assert queries_of_a_round() == one_watched


# --- at the seam: a request Ready ----------------------------------------------------------


def test_a_request_made_ready_checks_its_tenants_budget_at_once(
    api_world, priced, clock, eager_tasks, django_capture_on_commit_callbacks
):
    # A larger quota applied by a run: its namespace holds 2 cores of a 2.5-core budget now.
    Tenant.objects.filter(pk=api_world.payments.pk).update(budget_cpu_millis=2500)
    asked = approve_if_needed(
        ask_for_namespace(api_world.payments, api_world.member, app="shop", cpu="2"),
        approver=api_world.admin,
    )
    run = services.start_provisioning(request_id=asked.pk, plan_digest="x")
    namespace(api_world, "payments-cart-dev", created=NOW)

    with django_capture_on_commit_callbacks(execute=True):
        services.mark_ready(run=run)

    [told] = [m for m in mail.outbox if "budget" in m.subject]
    assert told.subject == "[Berth] payments: 80 % of its CPU budget in use"
    assert api_world.owner.email in told.to


# --- the tenant's page ---------------------------------------------------------------------


def test_the_tenant_page_shows_this_months_alerts_and_the_cost_as_a_share_of_the_threshold(
    api_world, payments, check, client
):
    check()
    client.force_login(api_world.member)

    page = client.get("/tenants/payments/").content.decode()

    assert 'id="budget-alerts"' in page
    assert "Monthly cost alert: <strong>EUR 10.00</strong>" in page
    assert f"EUR {COST_AT_NOW}" in page and '<strong id="cost-alert-share">83 %</strong>' in page
    assert f'<td>Monthly cost</td><td class="num">80 %</td><td>EUR {COST_AT_NOW} of' in page
    # A member sees the threshold but is not offered its form.
    assert 'name="monthly_cost_alert"' not in page


def test_an_owner_sets_the_threshold_on_the_tenant_page(api_world, payments, client):
    client.force_login(api_world.owner)
    assert 'name="monthly_cost_alert"' in client.get("/tenants/payments/").content.decode()

    response = client.post("/tenants/payments/budget-alerts/", {"monthly_cost_alert": "12.50"})

    assert response.status_code == 302
    assert response["Location"] == "/tenants/payments/#budget-alerts"
    payments.refresh_from_db()
    assert payments.monthly_cost_alert == Decimal("12.50")
    event = AuditEvent.objects.get(action="tenant.cost_alert")
    assert (event.actor, event.before, event.after) == (
        api_world.owner,
        {"monthly_cost_alert": "10.00"},
        {"monthly_cost_alert": "12.50"},
    )


def test_an_empty_threshold_clears_it(api_world, payments, client):
    client.force_login(api_world.owner)

    client.post("/tenants/payments/budget-alerts/", {"monthly_cost_alert": ""})

    payments.refresh_from_db()
    assert payments.monthly_cost_alert is None


def test_a_member_who_is_not_an_owner_cannot_set_the_threshold(api_world, payments, client):
    client.force_login(api_world.member)

    response = client.post("/tenants/payments/budget-alerts/", {"monthly_cost_alert": "1"})

    assert response.status_code == 403
    payments.refresh_from_db()
    assert payments.monthly_cost_alert == Decimal("10.00")
    assert not AuditEvent.objects.filter(action="tenant.cost_alert").exists()


@pytest.mark.parametrize(
    ("typed", "said"),
    [
        ("-5", "The monthly cost alert must be above 0"),
        ("0", "The monthly cost alert must be above 0"),
        ("ten euros", "The monthly cost alert is an amount such as 500 or 1250.50"),
        ("1,000", "The monthly cost alert is an amount such as 500 or 1250.50"),
        ("12.345", "The monthly cost alert has at most 2 decimal places"),
        ("10000000000", "The monthly cost alert is at most 9,999,999,999.99"),
    ],
)
def test_a_bad_amount_is_refused_on_its_field_and_nothing_is_saved(
    api_world, payments, client, typed, said
):
    client.force_login(api_world.owner)

    response = client.post("/tenants/payments/budget-alerts/", {"monthly_cost_alert": typed})

    assert response.status_code == 200
    field = response.context["form"]["monthly_cost_alert"]
    assert [error for error in field.errors if error.startswith(said)], field.errors
    payments.refresh_from_db()
    assert payments.monthly_cost_alert == Decimal("10.00")
    assert not AuditEvent.objects.filter(action="tenant.cost_alert").exists()


def test_a_threshold_the_month_already_passed_is_told_at_once(
    api_world, payments, client, eager_tasks, django_capture_on_commit_callbacks
):
    client.force_login(api_world.owner)

    with django_capture_on_commit_callbacks(execute=True):
        client.post("/tenants/payments/budget-alerts/", {"monthly_cost_alert": "8"})

    [told] = mail.outbox
    assert "passed 100 %" in told.subject
