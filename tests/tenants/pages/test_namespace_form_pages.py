"""Asking for a namespace in the browser: the request form (a submitted request lands on
its page; bad input, the budget and the approval policy are said on the form, which keeps
what was typed) and the preview of the namespace's final name."""

import re

import pytest

from tenants.choices import RequestState
from tenants.models import ApprovalRule, Namespace, Request, Tenant
from tests.support.tenants_pages import submit

NAMESPACE_FORM = "/tenants/payments/request/namespace/"


def form_data(**overrides):
    return {
        "app": "shop",
        "tier": "prod",
        "cluster": "sandbox",
        "cpu": "1",
        "memory": "1Gi",
        "storage": "",
        **overrides,
    }


def test_member_submits_a_namespace_request_and_lands_on_its_page(client, demo_world):
    client.force_login(demo_world["developer"])
    response = client.post(NAMESPACE_FORM, form_data())

    created = Request.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/requests/{created.pk}/"
    assert created.payload["cpu_millis"] == 1000
    assert created.state == RequestState.SUBMITTED


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("app", "Bad_Name", "lower-case letters"),
        ("cpu", "plenty", "not a Kubernetes quantity"),
        ("cpu", "40", "more than the prod tier allows"),
        ("tier", "gold", "Select a valid choice"),
    ],
)
def test_bad_input_re_renders_the_form_with_messages_and_saves_nothing(
    client, demo_world, field, value, message
):
    client.force_login(demo_world["developer"])
    response = client.post(NAMESPACE_FORM, form_data(**{field: value}))

    assert response.status_code == 200
    assert message in response.content.decode()
    assert value in response.content.decode()  # what was typed is kept
    assert not Request.objects.exists() and not Namespace.objects.exists()


def test_over_budget_is_shown_with_the_numbers(client, demo_world):
    Tenant.objects.filter(slug="payments").update(budget_cpu_millis=1500)
    client.force_login(demo_world["developer"])
    client.post(NAMESPACE_FORM, form_data(app="one"))

    page = client.post(NAMESPACE_FORM, form_data(app="two")).content.decode()

    assert (
        "Asks for 1 core of CPU, but payments has 1 of its budget of 1.5 cores of "
        "CPU taken: 0 in use "
        "by its namespaces, 1 requested by requests not yet provisioned; 0.5 left." in page
    )
    assert Request.objects.count() == 1


def test_policy_denial_is_shown_on_the_form(client, demo_world):
    ApprovalRule.objects.create(
        position=1,
        name="freeze",
        outcome="deny",
        condition="true",
        message="Change freeze until Monday.",
    )
    client.force_login(demo_world["developer"])
    page = client.post(NAMESPACE_FORM, form_data()).content.decode()
    assert "Change freeze until Monday." in page


def test_outsider_cannot_open_another_tenants_form(client, demo_world):
    client.force_login(demo_world["outsider"])
    assert client.get(NAMESPACE_FORM).status_code == 404


def test_name_preview_shows_the_truncated_final_name(client, demo_world):
    client.force_login(demo_world["developer"])
    app = "a-very-long-application-name-for-the-quarterly-reports"
    page = client.get(
        "/tenants/payments/name-preview/", {"app": app, "tier": "staging", "cluster": "sandbox"}
    ).content.decode()
    assert re.search(r"payments-a-very-long-application-name-for-[0-9a-f]{12}-staging</code>", page)
    assert "shortened with a stable hash" in page


def test_name_preview_warns_about_a_taken_name(client, demo_world):
    asked = submit(demo_world)
    client.force_login(demo_world["developer"])
    page = client.get(
        "/tenants/payments/name-preview/", {"app": "shop", "tier": "prod", "cluster": "sandbox"}
    ).content.decode()
    assert '<span class="badge badge-taken">taken</span>' in page
    assert f"payments-shop-prod is already requested (request #{asked.pk})." in page
