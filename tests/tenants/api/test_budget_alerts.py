"""/api/v1/tenants/{slug}/budget-alerts/: members read the monthly cost alert, the month's
cost as a share of it and this month's alerts; owners and platform admins set the
threshold, audited; a bad amount is refused naming the field, and nothing is saved."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
import time_machine

from tenants import services
from tenants.models import AuditEvent, Tenant
from tests.support.api import api, assert_problem
from tests.support.tenants_showback import NOW, namespace

URL = "/api/v1/tenants/payments/budget-alerts/"


@pytest.fixture
def payments(api_world, priced):
    with time_machine.travel(NOW, tick=False):
        yield Tenant.objects.get(pk=api_world.payments.pk)


def threshold(tenant: Tenant) -> Decimal | None:
    tenant.refresh_from_db()
    return tenant.monthly_cost_alert


def test_an_owner_sets_the_threshold(api_world, payments):
    response = api(api_world.owner).put(URL, {"monthly_cost_alert": "500"}, format="json")

    assert response.status_code == 200, response.content
    assert response.json()["monthly_cost_alert"] == "500.00"
    assert threshold(payments) == Decimal("500.00")
    event = AuditEvent.objects.get(action="tenant.cost_alert")
    assert (event.actor, event.after) == (api_world.owner, {"monthly_cost_alert": "500.00"})


def test_a_platform_admin_sets_it_too_and_null_clears_it(api_world, payments):
    api(api_world.admin).put(URL, {"monthly_cost_alert": "500"}, format="json")

    response = api(api_world.admin).put(URL, {"monthly_cost_alert": None}, format="json")

    assert response.status_code == 200 and response.json()["monthly_cost_alert"] is None
    assert threshold(payments) is None


@pytest.mark.parametrize("who", ["member", "viewer"])
def test_people_of_the_tenant_who_are_not_owners_cannot_set_it(api_world, payments, who):
    assert_problem(
        api(getattr(api_world, who)).put(URL, {"monthly_cost_alert": "1"}, format="json"), 403
    )

    assert threshold(payments) is None
    assert not AuditEvent.objects.filter(action="tenant.cost_alert").exists()


def test_someone_outside_the_tenant_is_told_it_does_not_exist(api_world, payments):
    assert_problem(api(api_world.outsider).get(URL), 404)
    assert_problem(
        api(api_world.outsider).put(URL, {"monthly_cost_alert": "1"}, format="json"), 404
    )


def test_a_read_only_token_cannot_set_it(api_world, payments):
    response = api(api_world.owner, scopes=["read"]).put(
        URL, {"monthly_cost_alert": "1"}, format="json"
    )

    assert_problem(response, 403)
    assert threshold(payments) is None


@pytest.mark.parametrize(
    ("sent", "said"),
    [
        ("-5", "The monthly cost alert must be above 0"),
        ("abc", "The monthly cost alert is an amount such as 500 or 1250.50"),
        ("12.345", "The monthly cost alert has at most 2 decimal places"),
        (12, 'Give the amount as a decimal string ("500.00")'),
    ],
)
def test_a_bad_amount_is_refused_naming_the_field_and_nothing_is_saved(
    api_world, payments, sent, said
):
    services.set_cost_alert(actor=api_world.owner, tenant=payments, amount="300")

    body = assert_problem(
        api(api_world.owner).put(URL, {"monthly_cost_alert": sent}, format="json"), 400
    )

    [message] = body["errors"]["monthly_cost_alert"]
    assert message.startswith(said), message
    assert threshold(payments) == Decimal("300.00")
    assert AuditEvent.objects.filter(action="tenant.cost_alert").count() == 1


def test_members_read_the_threshold_the_months_cost_and_its_alerts(api_world, payments):
    namespace(api_world, created=NOW - timedelta(hours=75))  # EUR 8.35
    services.set_cost_alert(actor=api_world.owner, tenant=payments, amount="10")

    answer = api(api_world.member).get(URL).json()

    assert {key: answer[key] for key in ("monthly_cost_alert", "currency", "cost", "share")} == {
        "monthly_cost_alert": "10.00",
        "currency": "EUR",
        "cost": "8.35",
        "share": 83,
    }
    assert answer["month"] == "2026-11-01"
    [alert] = answer["alerts"]
    assert (alert["measure"], alert["percent"]) == ("cost", 80)
    assert alert["detail"] == "EUR 8.35 of EUR 10.00 this month"


def test_without_a_threshold_the_cost_is_not_watched(api_world, payments):
    answer = api(api_world.member).get(URL).json()

    assert (answer["monthly_cost_alert"], answer["cost"], answer["share"]) == (None, None, None)
    assert answer["alerts"] == []
