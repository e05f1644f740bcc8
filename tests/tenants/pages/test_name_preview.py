"""The request forms' live preview (fetched by the form's script as people type): every
namespace the request would create, a project's Kargo namespace and the tenant's shared
namespace among them, each said "taken" when the registry holds it, with the very words
submission refuses it with (one check, tenants.name_registry.refusal, makes both)."""

from __future__ import annotations

import html
import re

import pytest

from tenants.choices import NamespaceState
from tenants.models import Namespace, NamespaceClaim, Request
from tests.support.workflow import ask_for_namespace, ask_for_project

PREVIEW = "/tenants/payments/name-preview/"
PROJECT_FORM = "/tenants/payments/request/project/"
NAMESPACE_FORM = "/tenants/payments/request/namespace/"


def shown(page: str) -> dict[str, dict]:
    """name → {"state": free | taken | refused, "what": ..., "says": the error under it}."""
    rows = {}
    for row in re.findall(r"<li data-name-state=.*?</li>", page, re.S):
        name = re.search(r"data-final-name>([^<]+)</code>", row)[1]
        error = re.search(r'<p class="error">(.*?)</p>', row, re.S)
        rows[name] = {
            "state": re.search(r'data-name-state="([a-z]+)"', row)[1],
            "what": html.unescape(re.search(r'<span class="muted">\((.+?); \d+ of 63', row)[1]),
            "says": html.unescape(error[1]) if error else "",
            "badge": '<span class="badge badge-taken">taken</span>' in row,
        }
    return rows


def preview(client, **query) -> dict[str, dict]:
    answer = client.get(PREVIEW, {"cluster": "sandbox", **query})
    assert answer.status_code == 200
    return shown(answer.content.decode())


def form_errors(page: str) -> list[str]:
    return [html.unescape(e) for e in re.findall(r'<p class="error" role="alert">(.*?)</p>', page)]


def test_a_kargo_project_previews_its_kargo_namespace_and_the_tenants_shared_one(
    client, demo_world
):
    client.force_login(demo_world["developer"])

    names = preview(client, app="ledger", tiers=["dev", "prod"], engine="argocd_kargo")

    assert list(names) == [
        "payments-ledger-dev",
        "payments-ledger-prod",
        "payments-ledger-kargo",
        "payments-apps",
    ]
    assert [row["what"] for row in names.values()] == [
        "dev",
        "prod",
        "its Kargo project",
        "the tenant's Argo CD applications, shared by its projects",
    ]
    assert {row["state"] for row in names.values()} == {"free"}


def test_what_the_preview_lists_is_what_submitting_claims(client, demo_world):
    client.force_login(demo_world["developer"])
    names = preview(client, app="ledger", tiers=["dev", "staging"], engine="argocd_kargo")

    answer = client.post(
        PROJECT_FORM,
        {
            "app": "ledger",
            "engine": "argocd_kargo",
            "cluster": "sandbox",
            "tiers": ["dev", "staging"],
        },
    )

    assert answer.status_code == 302, form_errors(answer.content.decode())
    claimed = set(
        NamespaceClaim.objects.filter(released_at__isnull=True, tenant=demo_world["tenant"])
        .exclude(purpose="gitops")  # the tenant's Flux name, claimed whatever the engine
        .values_list("name", flat=True)
    )
    assert claimed == set(names)


@pytest.mark.parametrize(
    ("engine", "shared"), [("argocd", "payments-apps"), ("flux", "payments-gitops")]
)
def test_a_project_without_kargo_previews_no_kargo_namespace(client, demo_world, engine, shared):
    client.force_login(demo_world["developer"])

    names = preview(client, app="ledger", tiers=["dev"], engine=engine)

    assert list(names) == ["payments-ledger-dev", shared]


def test_a_namespace_request_previews_its_one_namespace(client, demo_world):
    client.force_login(demo_world["developer"])

    assert list(preview(client, app="shop", tier="dev")) == ["payments-shop-dev"]


def test_a_name_a_waiting_request_claimed_is_taken_in_the_preview_as_submit_refuses_it(
    client, demo_world
):
    first = ask_for_namespace(demo_world["tenant"], demo_world["developer"], app="shop")
    client.force_login(demo_world["developer"])

    row = preview(client, app="shop", tier="dev")["payments-shop-dev"]
    page = client.post(
        NAMESPACE_FORM,
        {"app": "shop", "tier": "dev", "cluster": "sandbox", "cpu": "1", "memory": "1Gi"},
    ).content.decode()

    assert row["state"] == "taken" and row["badge"]
    assert row["says"] == f"payments-shop-dev is already requested (request #{first.pk})."
    assert form_errors(page) == [row["says"]]  # submit refuses it with the same words
    assert Request.objects.count() == 1


def test_a_name_that_exists_is_taken_in_the_preview(client, demo_world):
    made = ask_for_namespace(demo_world["tenant"], demo_world["developer"], app="shop")
    Namespace.objects.filter(request=made).update(state=NamespaceState.ACTIVE)
    client.force_login(demo_world["developer"])

    row = preview(client, app="shop", tier="dev")["payments-shop-dev"]

    assert row["state"] == "taken"
    assert row["says"] == "payments-shop-dev already exists on sandbox."


def test_a_kargo_namespace_another_request_holds_is_taken_and_refused_alike(client, demo_world):
    ask_for_project(demo_world["tenant"], demo_world["developer"], app="ledger", tiers=("dev",))
    client.force_login(demo_world["developer"])

    names = preview(client, app="ledger", tiers=["staging"], engine="argocd_kargo")
    page = client.post(
        PROJECT_FORM,
        {"app": "ledger", "engine": "argocd_kargo", "cluster": "sandbox", "tiers": ["staging"]},
    ).content.decode()

    assert names["payments-ledger-staging"]["state"] == "free"
    assert names["payments-apps"]["state"] == "free"  # the tenant's own, shared by design
    kargo = names["payments-ledger-kargo"]
    assert kargo["state"] == "taken"
    assert kargo["says"] in form_errors(page)


def test_a_reserved_name_is_refused_but_not_said_taken(client, demo_world, settings):
    settings.BERTH_NAMESPACE = "payments-berth-dev"
    client.force_login(demo_world["developer"])

    row = preview(client, app="berth", tier="dev")["payments-berth-dev"]

    assert row["state"] == "refused" and not row["badge"]
    assert "reserved" in row["says"]
