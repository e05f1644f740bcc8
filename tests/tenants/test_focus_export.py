"""The FOCUS export: GET /api/v1/costs/focus/?month=YYYY-MM, a month of showback as a
FOCUS 1.2 dataset, CSV or JSON, each tenant a sub account, for whoever may see it."""

from __future__ import annotations

import csv
import io
import json
import re
from datetime import UTC, date, datetime
from decimal import Decimal

import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tenants import services
from tenants.choices import NamespaceState
from tenants.focus import NAMES
from tenants.models import Cluster, ClusterPrice, Project
from tenants.services import allocations
from tests.support.api import api, assert_problem
from tests.support.tenants_showback import NOW, PRICES, costs, namespace, removed

URL = "/api/v1/costs/focus/"
OCTOBER = "2026-10"
# FOCUS 1.2's mandatory columns: Column ID → (data type, whether it allows nulls, allowed
# values or None), as the specification's column definitions give them
# (specification/columns/*.md of the FinOps-Open-Cost-and-Usage-Spec/FOCUS_Spec repository
# at tag v1.2: "Feature level: Mandatory" in each one's content constraints).
CHARGE_CATEGORIES = {"Usage", "Purchase", "Tax", "Credit", "Adjustment"}
SERVICE_CATEGORIES = {
    "AI and Machine Learning", "Analytics", "Business Applications", "Compute", "Databases",
    "Developer Tools", "Multicloud", "Identity", "Integration", "Internet of Things",
    "Management and Governance", "Media", "Migration", "Mobile", "Networking", "Security",
    "Storage", "Web", "Other",
}  # fmt: skip
MANDATORY = {
    "BilledCost": ("Decimal", False, None),
    "BillingAccountId": ("String", False, None),
    "BillingAccountName": ("String", True, None),
    "BillingCurrency": ("Currency", False, None),
    "BillingPeriodEnd": ("Date/Time", False, None),
    "BillingPeriodStart": ("Date/Time", False, None),
    "ChargeCategory": ("String", False, CHARGE_CATEGORIES),
    "ChargeClass": ("String", True, {"Correction"}),
    "ChargeDescription": ("String", True, None),
    "ChargePeriodEnd": ("Date/Time", False, None),
    "ChargePeriodStart": ("Date/Time", False, None),
    "ContractedCost": ("Decimal", False, None),
    "EffectiveCost": ("Decimal", False, None),
    "InvoiceIssuerName": ("String", False, None),
    "ListCost": ("Decimal", False, None),
    "PricingQuantity": ("Decimal", True, None),
    "PricingUnit": ("String", True, None),
    "ProviderName": ("String", False, None),
    "PublisherName": ("String", False, None),
    "ServiceCategory": ("String", False, SERVICE_CATEGORIES),
    "ServiceName": ("String", False, None),
}
# Numeric Format: digits, one point, a minus sign only below zero (no "+", commas or units).
NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?")
# Date/Time Format: "YYYY-MM-DDTHH:mm:ssZ", in UTC.
MOMENT = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")
CURRENCY = re.compile(r"[A-Z]{3}")  # ISO 4217


@pytest.fixture
def clock():
    with time_machine.travel(NOW, tick=False) as traveller:
        yield traveller


def at(day: int, hour: int = 0) -> datetime:
    return datetime(2026, 10, day, hour, tzinfo=UTC)


@pytest.fixture
def october(api_world, priced, clock):
    """payments-shop-dev from September on, its CPU quota doubled on 11 October; the
    cluster's CPU price up on 21 October; payments-shop-prod from 5 to 25 October, then
    decommissioned; search-api-dev all month."""
    dev = namespace(api_world, "payments-shop-dev", created=datetime(2026, 9, 20, tzinfo=UTC))
    dev.cpu_millis = 4000
    dev.save(update_fields=["cpu_millis"])
    allocations.record_held([dev], at=at(11))
    ClusterPrice.objects.create(
        cluster=Cluster.objects.get(name="sandbox"),
        **{**PRICES, "effective_from": at(21), "cpu_core_hour": Decimal("0.05")},
    )
    shop = Project.objects.create(tenant=api_world.payments, name="shop")
    prod = namespace(
        api_world,
        "payments-shop-prod",
        tier="prod",
        project=shop,
        created=at(5, 12),
        state=NamespaceState.DECOMMISSIONED,
    )
    removed(api_world, prod, finished=at(25, 12))
    namespace(api_world, "search-api-dev", created=at(1), tenant=api_world.search)
    return api_world


def export(user, month=OCTOBER, *, accept: str | None = None, **query) -> tuple[list, object]:
    """The month's rows as dicts, nulls as None (CSV: empty cells; JSON: decimals read as
    Decimal), and the response."""
    headers = {"HTTP_ACCEPT": accept} if accept else {}
    response = api(user).get(URL, {"month": month, **query}, **headers)
    assert response.status_code == 200, response.content[:500]
    body = b"".join(response.streaming_content).decode()
    if response["Content-Type"].startswith("application/json"):
        return json.loads(body, parse_float=Decimal, parse_int=Decimal), response
    lines = csv.DictReader(io.StringIO(body, newline=""))
    return [{name: cell or None for name, cell in row.items()} for row in lines], response


def of(found: list[dict], resource: str, sku: str | None = None) -> list[dict]:
    return [
        row
        for row in found
        if row["ResourceName"] == resource and (sku is None or row["SkuId"] == sku)
    ]


# --- what the rows say ----------------------------------------------------------------------


def test_each_stretch_of_a_namespace_is_a_row_per_price_at_the_price_then_in_force(october):
    found, response = export(october.admin)

    cpu = of(found, "payments-shop-dev", "namespace-cpu")
    assert [
        (row["ChargePeriodStart"], row["ChargePeriodEnd"], row["PricingQuantity"]) for row in cpu
    ] == [
        ("2026-10-01T00:00:00Z", "2026-10-11T00:00:00Z", "480"),  # 2 cores, 240 hours
        ("2026-10-11T00:00:00Z", "2026-10-21T00:00:00Z", "960"),  # 4 cores from the 11th
        ("2026-10-21T00:00:00Z", "2026-11-01T00:00:00Z", "1056"),  # 264 hours
    ]
    assert [(row["ListUnitPrice"], row["ListCost"]) for row in cpu] == [
        ("0.04", "19.2"),
        ("0.04", "38.4"),
        ("0.05", "52.8"),  # the price from the 21st
    ]
    first = cpu[0]
    assert first["BilledCost"] == first["EffectiveCost"] == first["ContractedCost"] == "19.2"
    assert first["PricingUnit"] == "Core-Hours" and first["SkuPriceId"] == "sandbox/cpu_core_hour"
    assert first["ChargeDescription"] == "2 CPU cores at 0.04 EUR per CPU core-hour"
    assert (first["ResourceId"], first["ResourceType"]) == (
        "sandbox/payments-shop-dev",
        "Kubernetes namespace",
    )
    assert (first["SubAccountId"], first["SubAccountName"]) == ("payments", october.payments.name)
    assert json.loads(first["Tags"]) == {"berth.dev/cluster": "sandbox", "berth.dev/tier": "dev"}
    units = {row["SkuId"]: row["PricingUnit"] for row in of(found, "payments-shop-dev")}
    assert units == {
        "namespace-cpu": "Core-Hours",
        "namespace-memory": "GiB-Hours",
        "namespace-storage": "GiB-Months",
        "namespace": "Namespace-Months",
    }
    assert response["Content-Disposition"] == 'attachment; filename="berth-focus-2026-10.csv"'


def test_a_decommissioned_namespace_is_charged_until_its_removal_finished(october):
    found, _ = export(october.admin)

    rows = of(found, "payments-shop-prod", "namespace")
    assert [(row["ChargePeriodStart"], row["ChargePeriodEnd"]) for row in rows] == [
        ("2026-10-05T12:00:00Z", "2026-10-21T00:00:00Z"),
        ("2026-10-21T00:00:00Z", "2026-10-25T12:00:00Z"),
    ]
    assert json.loads(rows[0]["Tags"]) == {
        "berth.dev/cluster": "sandbox",
        "berth.dev/project": "shop",
        "berth.dev/tier": "prod",
    }


def test_json_has_the_rows_the_csv_has_with_numbers_as_numbers(october):
    from_csv, _ = export(october.admin)
    from_json, response = export(october.admin, format="json")

    assert response["Content-Type"] == "application/json"
    assert list(from_json[0]) == list(from_csv[0])  # the columns, in the same order
    assert from_json[0]["BilledCost"] == Decimal(from_csv[0]["BilledCost"])
    assert from_json[0]["Tags"] == json.loads(from_csv[0]["Tags"])
    assert [
        {
            name: str(value) if isinstance(value, Decimal) else value
            for name, value in row.items()
            if name != "Tags"
        }
        for row in from_json
    ] == [{name: value for name, value in row.items() if name != "Tags"} for row in from_csv]


def test_the_accept_header_chooses_json_too(october):
    found, response = export(october.admin, accept="application/json")

    assert response["Content-Type"] == "application/json" and isinstance(found, list)
    assert "Accept" in response["Vary"]


def test_every_mandatory_column_of_focus_1_2_is_there_of_its_type_and_values(october):
    services.close_month(date(2026, 10, 1), now=NOW)
    services.add_adjustment(
        actor=october.admin,
        tenant=october.payments,
        month=OCTOBER,
        amount="-12.50",
        note="Outage on 3 October",
        namespace="payments-shop-dev",
    )
    for found in (export(october.admin)[0], export(october.admin, format="json")[0]):
        assert found and {row["ChargeCategory"] for row in found} == {"Usage", "Adjustment"}
        for row in found:
            for column, (kind, nullable, allowed) in MANDATORY.items():
                value = row[column]  # present on every row
                if value is None:
                    assert nullable, (column, row)
                    continue
                text = str(value)
                if kind == "Decimal":
                    assert NUMBER.fullmatch(text), (column, text)
                    assert Decimal(text).is_finite()
                elif kind == "Date/Time":
                    assert MOMENT.fullmatch(text), (column, text)
                    datetime.fromisoformat(text)
                elif kind == "Currency":
                    assert CURRENCY.fullmatch(text), (column, text)
                else:
                    assert isinstance(value, str) and text.strip(), (column, value)
                if allowed is not None:
                    assert value in allowed, (column, value)
            assert_rules_between_columns(row)


def assert_rules_between_columns(row: dict) -> None:
    """What FOCUS 1.2's column definitions require of one column given others."""
    usage = row["ChargeCategory"] in ("Usage", "Purchase") and row["ChargeClass"] != "Correction"
    if usage:  # PricingQuantity and ListUnitPrice must not be null, and multiply to ListCost
        quantity, price = Decimal(str(row["PricingQuantity"])), Decimal(str(row["ListUnitPrice"]))
        assert quantity * price == Decimal(str(row["ListCost"]))
        assert row["SkuId"] and row["SkuPriceId"] and row["SkuMeter"]
    assert (row["PricingUnit"] is None) == (row["PricingQuantity"] is None)
    assert (row["ResourceType"] is None) == (row["ResourceId"] is None)
    assert (row["SubAccountName"] is None) == (row["SubAccountId"] is None)
    # No discounts: every cost of a charge is its billed cost.
    assert row["BilledCost"] == row["EffectiveCost"] == row["ContractedCost"] == row["ListCost"]
    # The charge period lies in the billing period, start inclusive, end exclusive.
    assert row["BillingPeriodStart"] <= row["ChargePeriodStart"] < row["ChargePeriodEnd"]
    assert row["ChargePeriodEnd"] <= row["BillingPeriodEnd"]
    assert row["ServiceSubcategory"] == "Containers"  # one of Compute's
    assert row["ChargeFrequency"] in {"One-Time", "Recurring", "Usage-Based"}
    if row["Tags"] is not None:
        tags = row["Tags"] if isinstance(row["Tags"], dict) else json.loads(row["Tags"])
        assert all(key.startswith("berth.dev/") for key in tags)  # provider-defined: prefixed
        assert all(isinstance(value, str | int | float | bool) for value in tags.values())


# --- the month's sums are the pages' --------------------------------------------------------


def billed(found: list[dict], tenant: str) -> Decimal:
    total = sum(
        (Decimal(str(row["BilledCost"])) for row in found if row["SubAccountId"] == tenant),
        Decimal(0),
    )
    return total.quantize(Decimal("0.01"))


def test_a_tenants_rows_add_up_to_its_costs_for_the_month(october):
    found, _ = export(october.admin)

    assert str(billed(found, "payments")) == costs(october, month=OCTOBER)["total"]


def test_a_closed_month_adds_its_adjustments_as_corrections(october):
    services.close_month(date(2026, 10, 1), now=NOW)
    note = 'Outage, "refund" agreed\nwith finance'  # a comma, quotes, a line break
    services.add_adjustment(
        actor=october.admin,
        tenant=october.payments,
        month=OCTOBER,
        amount="-12.50",
        note=note,
        namespace="payments-shop-dev",
    )
    services.add_adjustment(
        actor=october.admin, tenant=october.payments, month=OCTOBER, amount="3", note="Support"
    )

    found, _ = export(october.admin)

    corrections = [row for row in found if row["ChargeCategory"] == "Adjustment"]
    [named] = [row for row in corrections if row["ResourceId"]]
    [general] = [row for row in corrections if not row["ResourceId"]]
    assert (named["BilledCost"], named["ChargeClass"], named["ChargeFrequency"]) == (
        "-12.5",
        "Correction",
        "One-Time",
    )
    assert named["ChargeDescription"] == f"Adjustment added 2026-11-12: {note}"
    assert (named["ChargePeriodStart"], named["ChargePeriodEnd"]) == (
        "2026-10-01T00:00:00Z",
        "2026-11-01T00:00:00Z",
    )
    assert named["ResourceId"] == "sandbox/payments-shop-dev" and named["PricingQuantity"] is None
    assert general["ResourceId"] is None and general["Tags"] is None
    assert str(billed(found, "payments")) == costs(october, month=OCTOBER)["total"]


def test_a_month_with_nothing_is_a_header_or_an_empty_list(api_world):
    response = api(api_world.admin).get(URL, {"month": "2020-01"})
    assert b"".join(response.streaming_content).decode().splitlines() == [",".join(NAMES)]
    found, _ = export(api_world.admin, "2020-01", format="json")
    assert found == []


def test_more_namespaces_cost_no_more_queries(october):
    with CaptureQueriesContext(connection) as few:
        export(october.admin)
    for number in range(5):
        namespace(october, f"payments-more{number}-dev", created=at(2))

    with CaptureQueriesContext(connection) as many:
        found, _ = export(october.admin)

    assert len(of(found, "payments-more4-dev")) == 8  # two price lists, four prices each
    assert len(many) == len(few)


# --- who sees what ----------------------------------------------------------------------------


def test_a_member_of_another_tenant_sees_none_of_its_rows(october):
    theirs, _ = export(october.outsider)  # sam, of search

    assert {row["SubAccountId"] for row in theirs} == {"search"}
    mine, _ = export(october.member)  # dev, of payments
    assert {row["SubAccountId"] for row in mine} == {"payments"}
    everyone, _ = export(october.admin)
    assert {row["SubAccountId"] for row in everyone} == {"payments", "search"}


def test_signing_in_is_needed(api_world):
    assert_problem(api().get(URL, {"month": OCTOBER}), 401)


@pytest.mark.parametrize("month", [None, "", "2026-13", "october", "2026-1", "1969-12"])
def test_a_missing_or_wrong_month_is_refused_naming_month(api_world, month):
    query = {} if month is None else {"month": month}
    response = api(api_world.member).get(URL, query)
    assert "month" in assert_problem(response, 400, "validation-error")["errors"]


@pytest.mark.parametrize("format", ["xml", ""])
def test_a_format_other_than_csv_or_json_is_refused_naming_format(api_world, format):
    response = api(api_world.member).get(URL, {"month": OCTOBER, "format": format})
    assert "format" in assert_problem(response, 400, "validation-error")["errors"]
