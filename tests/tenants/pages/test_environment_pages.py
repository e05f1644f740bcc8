"""Ephemeral environments in the browser's pages: the tenant's list, an environment's page
(extend, end), starting one from a form, and the tenant's environment rules."""

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from tenants import demo, services
from tenants.choices import EnvironmentState, RequestKind, Role
from tenants.models import (
    AuditEvent,
    EnvironmentRule,
    EphemeralEnvironment,
    Project,
    Request,
    Tenant,
    User,
)
from tests.support.factories import MembershipFactory, UserFactory

RULES_PAGE = "/tenants/payments/environment-rules/"
PREVIEW = "/tenants/payments/environment-preview/"


@pytest.fixture
def world(db):
    demo.seed(sandbox_api_url="http://127.0.0.1:9")
    tenant = Tenant.objects.get(slug="payments")
    Project.objects.create(tenant=tenant, name="checkout")
    return {
        "tenant": tenant,
        "developer": User.objects.get(username="dev"),
        "owner": User.objects.get(username="olivia"),
        "admin": User.objects.get(username="pat"),
        "outsider": User.objects.get(username="sam"),  # a developer of the search tenant
    }


def start(world, *, env_slug="review-42", requester=None, live=True, **payload):
    """An environment of payments' checkout project, made as CI would, then marked live
    (provisioning is the engine's business)."""
    created = services.submit_request(
        tenant=world["tenant"],
        kind=RequestKind.EPHEMERAL,
        requester=requester or world["developer"],
        payload={
            "project": "checkout",
            "env_slug": env_slug,
            "branch": "feature/new-cart",
            "mr_id": "42",
            **payload,
        },
    )
    environment = EphemeralEnvironment.objects.get(request=created)
    if live:
        EphemeralEnvironment.objects.filter(pk=environment.pk).update(state=EnvironmentState.LIVE)
        environment.refresh_from_db()
    return environment


def member(world, role=Role.MEMBER, tenant=None):
    return MembershipFactory(tenant=tenant or world["tenant"], role=role, user=UserFactory()).user


# --- the tenant's page ----------------------------------------------------------------------


def test_tenant_page_lists_running_environments_with_their_expiry(client, world):
    environment = start(world)
    ended = start(world, env_slug="review-7")
    EphemeralEnvironment.objects.filter(pk=ended.pk).update(state=EnvironmentState.ENDED)
    EphemeralEnvironment.objects.filter(pk=environment.pk).update(warned_at=timezone.now())
    client.force_login(world["developer"])

    page = client.get("/tenants/payments/").content.decode()

    assert f'href="/environments/{environment.pk}/"' in page
    assert "payments-checkout-review-42" in page
    assert "feature/new-cart" in page and "!42" in page
    assert f"{environment.expires_at:%Y-%m-%d %H:%M} UTC" in page
    assert "in 1\xa0day, 23\xa0hours" in page  # the demo review tier's 2d default
    assert ">warned</span>" in page
    assert f'href="/environments/{ended.pk}/"' not in page
    assert 'href="/tenants/payments/environment-rules/"' in page
    assert 'href="/tenants/payments/request/ephemeral/"' in page


# --- an environment's page ------------------------------------------------------------------


def test_environment_page_shows_its_variables_namespace_and_lifetime(client, world):
    environment = start(world, ttl="2h")
    client.force_login(world["developer"])

    page = client.get(f"/environments/{environment.pk}/").content.decode()

    for shown in (
        "checkout",
        "review-42",
        "feature/new-cart",
        "!42",
        f'href="/namespaces/{environment.namespace_id}/"',
        "payments-checkout-review-42",
        "the default template",
        f"{environment.expires_at:%Y-%m-%d %H:%M} UTC",
        f"{environment.max_expires_at:%Y-%m-%d %H:%M} UTC",
        f'href="/requests/{environment.request_id}/"',
        "Its own: deleted when it ends",
    ):
        assert shown in page, shown
    assert "Extend</button>" in page and "End now</button>" in page


def test_creator_extends_the_environment(client, world):
    environment = start(world, ttl="2h")
    client.force_login(world["developer"])

    response = client.post(f"/environments/{environment.pk}/extend/", {"ttl": "3d"}, follow=True)

    environment.refresh_from_db()
    assert response.redirect_chain == [(f"/environments/{environment.pk}/", 302)]
    assert abs(environment.expires_at - (timezone.now() + timedelta(days=3))) < timedelta(minutes=1)
    assert "now lives until" in response.content.decode()
    assert "environment.extend" in response.content.decode()  # its history
    assert AuditEvent.objects.filter(action="environment.extend").count() == 1


def test_extension_past_the_maximum_is_refused_with_the_reason_and_keeps_the_ttl(client, world):
    environment = start(world, ttl="2h")
    client.force_login(world["developer"])

    response = client.post(f"/environments/{environment.pk}/extend/", {"ttl": "30d"})

    page = response.content.decode()
    before = environment.expires_at
    environment.refresh_from_db()
    assert response.status_code == 200
    assert "its tier&#x27;s maximum TTL" in page and "ask for at most" in page
    assert 'value="30d"' in page
    assert environment.expires_at == before


def test_a_ttl_that_is_no_duration_is_explained(client, world):
    environment = start(world)
    client.force_login(world["developer"])
    page = client.post(f"/environments/{environment.pk}/extend/", {"ttl": "soon"})
    assert "is not a duration" in page.content.decode()


def test_a_member_who_did_not_create_it_may_end_but_not_extend_it(client, world):
    environment = start(world)
    client.force_login(member(world))

    page = client.get(f"/environments/{environment.pk}/").content.decode()

    assert "Extend</button>" not in page
    assert "End now</button>" in page
    assert client.post(f"/environments/{environment.pk}/extend/", {"ttl": "1h"}).status_code == 403


@pytest.mark.parametrize("role", [Role.MEMBER, Role.VIEWER])
@pytest.mark.parametrize(
    "path", ["/environments/{pk}/", "/environments/{pk}/extend/", "/environments/{pk}/end/"]
)
def test_people_of_another_tenant_get_404(client, world, role, path):
    environment = start(world)
    client.force_login(member(world, role, tenant=Tenant.objects.get(slug="search")))
    url = path.format(pk=environment.pk)
    response = client.get(url) if path.endswith("}/") else client.post(url, {"ttl": "1h"})
    assert response.status_code == 404


def test_ending_it_makes_an_end_request_linked_from_its_page(client, world):
    environment = start(world)
    client.force_login(world["developer"])

    response = client.post(
        f"/environments/{environment.pk}/end/", {"reason": "Merged."}, follow=True
    )

    end = Request.objects.get(kind=RequestKind.END_ENVIRONMENT)
    environment.refresh_from_db()
    page = response.content.decode()
    assert end.payload["environment"] == environment.pk
    assert end.payload["reason"] == "Merged."
    assert environment.state == EnvironmentState.ENDING
    assert f"is ending: request #{end.pk}" in page
    assert f'href="/requests/{end.pk}/"' in page
    assert "End now</button>" not in page


def test_ending_one_already_ending_says_why_not_and_keeps_the_reason(client, world):
    environment = start(world)
    services.end_environment(environment_id=environment.pk, actor=world["developer"], cause="ended")
    client.force_login(world["owner"])

    response = client.post(f"/environments/{environment.pk}/end/", {"reason": "Twice."})

    page = response.content.decode()
    assert response.status_code == 200
    assert f"Environment #{environment.pk} is ending, not live." in page
    assert "Twice.</textarea>" in page
    assert Request.objects.filter(kind=RequestKind.END_ENVIRONMENT).count() == 1


# --- starting one from the web ----------------------------------------------------------------


def test_request_menu_offers_an_ephemeral_environment(client, world):
    client.force_login(world["developer"])
    page = client.get("/tenants/payments/request/").content.decode()
    assert 'href="/tenants/payments/request/ephemeral/"' in page


def test_member_starts_an_environment_from_the_form(client, world):
    client.force_login(world["developer"])
    form = client.get("/tenants/payments/request/ephemeral/").content.decode()
    assert f'data-preview-url="{PREVIEW}"' in form
    assert "14d" in form  # the review tier's maximum TTL

    response = client.post(
        "/tenants/payments/request/ephemeral/",
        {
            "project": "checkout",
            "env_slug": "review-9",
            "branch": "fix/typo",
            "mr_id": "9",
            "ttl": "4h",
            "tier": "review",
            "cluster": "",
            "cpu": "",
            "memory": "",
            "storage": "",
        },
    )

    environment = EphemeralEnvironment.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/requests/{environment.request_id}/"
    assert environment.namespace.name == "payments-checkout-review-9"
    assert abs(environment.expires_at - (timezone.now() + timedelta(hours=4))) < timedelta(
        minutes=1
    )
    request_page = client.get(response["Location"]).content.decode()
    assert f'href="/environments/{environment.pk}/"' in request_page


def test_form_shows_a_refusal_and_keeps_what_was_typed(client, world):
    EnvironmentRule.objects.create(
        tenant=world["tenant"],
        position=1,
        condition="true",
        refuse=True,
        message="Review apps are paused this week.",
    )
    client.force_login(world["developer"])
    response = client.post(
        "/tenants/payments/request/ephemeral/",
        {
            "project": "checkout",
            "env_slug": "review-9",
            "ttl": "4h",
            "tier": "review",
        },
    )
    page = response.content.decode()
    assert response.status_code == 200
    assert "Review apps are paused this week." in page
    assert 'value="review-9"' in page
    assert not EphemeralEnvironment.objects.exists()


def test_preview_shows_the_namespace_and_the_rule_that_chose_it(client, world):
    EnvironmentRule.objects.create(
        tenant=world["tenant"],
        position=1,
        condition='env_slug.startsWith("review")',
        namespace_template="payments-review-apps",
    )
    client.force_login(world["developer"])

    page = client.get(PREVIEW, {"project": "checkout", "env_slug": "review-3"}).content.decode()

    assert "payments-review-apps</code>" in page
    assert "Rule 1" in page
    assert "Shared" in page


def test_preview_shows_a_long_env_slug_shortened_with_a_hash(client, world):
    client.force_login(world["developer"])
    slug = "review-a-very-long-branch-name-for-the-quarterly-reports-cart"

    page = client.get(PREVIEW, {"project": "checkout", "env_slug": slug}).content.decode()

    # Its first 50 characters, then 48 bits of the SHA-256 of the whole name.
    assert re.search(
        r"payments-checkout-review-a-very-long-branch-name-f-[0-9a-f]{12}</code>", page
    )
    assert "63 of 63 characters" in page
    assert "shortened with a stable hash" in page
    assert "The default template" in page


def test_preview_says_when_no_rule_matches(client, world):
    EnvironmentRule.objects.create(
        tenant=world["tenant"],
        position=1,
        condition='branch == "x"',
        namespace_template="payments-x",
    )
    client.force_login(world["developer"])
    page = client.get(PREVIEW, {"project": "checkout", "env_slug": "review-3"}).content.decode()
    assert "No environment rule matches" in page


def test_preview_of_another_tenant_is_404(client, world):
    client.force_login(world["outsider"])
    assert client.get(PREVIEW, {"project": "checkout", "env_slug": "r"}).status_code == 404


# --- the environment rules page -------------------------------------------------------------

VALID_RULES = """\
- if: env_slug.startsWith("review")
  namespace: payments-review-apps
- if: branch == "main"
  refuse: true
  message: The main branch deploys through the staging tier.
- namespace: $TENANT-$PROJECT-$ENV_SLUG
"""


def test_owner_saves_rules_written_as_yaml(client, world):
    client.force_login(world["owner"])

    response = client.post(RULES_PAGE, {"rules": VALID_RULES}, follow=True)

    rules = list(world["tenant"].environment_rules.order_by("position"))
    assert response.redirect_chain == [(RULES_PAGE, 302)]
    assert [(r.position, r.condition, r.namespace_template, r.refuse) for r in rules] == [
        (1, 'env_slug.startsWith("review")', "payments-review-apps", False),
        (2, 'branch == "main"', "", True),
        (3, "", "$TENANT-$PROJECT-$ENV_SLUG", False),
    ]
    page = response.content.decode()
    assert "3 environment rules saved" in page
    assert "The main branch deploys through the staging tier." in page
    # The editor shows them back as the same YAML.
    assert (
        "- if: env_slug.startsWith(&quot;review&quot;)\n  namespace: payments-review-apps" in page
    )


def test_a_rule_whose_if_does_not_compile_is_refused_by_number_and_the_text_kept(client, world):
    EnvironmentRule.objects.create(
        tenant=world["tenant"], position=1, condition="", namespace_template="payments-all"
    )
    text = "- namespace: payments-$ENV_SLUG\n- if: env_slug.startsWith(\n  namespace: payments-x\n"
    client.force_login(world["owner"])

    response = client.post(RULES_PAGE, {"rules": text})

    page = response.content.decode()
    assert response.status_code == 200
    assert "Rule 2: The if condition does not compile" in page
    assert "env_slug.startsWith(\n  namespace: payments-x" in page
    assert list(world["tenant"].environment_rules.values_list("namespace_template", flat=True)) == [
        "payments-all"
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("- if: [unclosed\n", "This is not valid YAML (line"),
        ("namespace: payments-x\n", "The rules must be a YAML list"),
        ("- just a string\n", "Rule 1: a rule is a mapping"),
        ("- if: 'true'\n  when: never\n", "write refuse: true"),
        ("- namespace: other-team-x\n", "outside the tenant&#x27;s prefix"),
    ],
)
def test_rules_that_are_not_rules_are_explained(client, world, text, message):
    client.force_login(world["owner"])
    page = client.post(RULES_PAGE, {"rules": text}).content.decode()
    assert message in page
    assert not EnvironmentRule.objects.exists()


def test_a_member_reads_the_rules_but_cannot_change_them(client, world):
    EnvironmentRule.objects.create(
        tenant=world["tenant"], position=1, condition="", namespace_template="payments-all"
    )
    client.force_login(world["developer"])

    page = client.get(RULES_PAGE).content.decode()

    assert "payments-all" in page
    assert "<textarea" not in page
    assert "Only owners of payments and platform admins" in page
    assert client.post(RULES_PAGE, {"rules": ""}).status_code == 403
    assert EnvironmentRule.objects.count() == 1


def test_a_platform_admin_may_change_the_rules(client, world):
    client.force_login(world["admin"])
    response = client.post(RULES_PAGE, {"rules": "- namespace: payments-$ENV_SLUG\n"})
    assert response.status_code == 302
    assert EnvironmentRule.objects.get().namespace_template == "payments-$ENV_SLUG"


def test_trying_the_rules_shows_the_matching_rule_and_namespace(client, world):
    services.replace_environment_rules(
        tenant=world["tenant"],
        actor=world["owner"],
        rules=[
            {"if": 'branch == "main"', "refuse": True, "message": "Not main."},
            {"namespace": "$TENANT-$PROJECT-mr-$MR_ID"},
        ],
    )
    client.force_login(world["developer"])

    shown = client.get(
        RULES_PAGE,
        {"project": "checkout", "env_slug": "review-5", "branch": "feature/x", "mr_id": "5"},
    ).content.decode()
    refused = client.get(
        RULES_PAGE, {"project": "checkout", "env_slug": "review-5", "branch": "main"}
    ).content.decode()

    assert "payments-checkout-mr-5</code>" in shown and "Rule 2" in shown
    assert re.search(r"Refused by <a [^>]+>rule 1</a>", refused) and "Not main." in refused


def test_rules_page_of_another_tenant_is_404(client, world):
    client.force_login(world["outsider"])
    assert client.get(RULES_PAGE).status_code == 404


def test_a_namespace_page_lists_the_environments_living_in_it(client, world):
    environment = start(world)
    client.force_login(world["developer"])
    page = client.get(f"/namespaces/{environment.namespace_id}/").content.decode()
    assert f"/environments/{environment.pk}/" in page
    assert f"{environment.project.name}/{environment.slug}" in page
