"""The tenant's environment rules page: owners and platform admins save rules written as
YAML, refused by rule number with the text kept; members read them; anyone may try them
on an environment's variables."""

import re

import pytest

from tenants import services
from tenants.models import EnvironmentRule

# The environments here are of payments' checkout project.
pytestmark = pytest.mark.usefixtures("checkout")


RULES_PAGE = "/tenants/payments/environment-rules/"


# --- the environment rules page -------------------------------------------------------------

VALID_RULES = """\
- if: env_slug.startsWith("review")
  namespace: payments-review-apps
- if: branch == "main"
  refuse: true
  message: The main branch deploys through the staging tier.
- namespace: $TENANT-$PROJECT-$ENV_SLUG
"""


def test_owner_saves_rules_written_as_yaml(client, demo_world):
    client.force_login(demo_world["owner"])

    response = client.post(RULES_PAGE, {"rules": VALID_RULES}, follow=True)

    rules = list(demo_world["tenant"].environment_rules.order_by("position"))
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


def test_a_rule_whose_if_does_not_compile_is_refused_by_number_and_the_text_kept(
    client, demo_world
):
    EnvironmentRule.objects.create(
        tenant=demo_world["tenant"], position=1, condition="", namespace_template="payments-all"
    )
    text = "- namespace: payments-$ENV_SLUG\n- if: env_slug.startsWith(\n  namespace: payments-x\n"
    client.force_login(demo_world["owner"])

    response = client.post(RULES_PAGE, {"rules": text})

    page = response.content.decode()
    assert response.status_code == 200
    assert "Rule 2: The if condition does not compile" in page
    assert "env_slug.startsWith(\n  namespace: payments-x" in page
    assert list(
        demo_world["tenant"].environment_rules.values_list("namespace_template", flat=True)
    ) == ["payments-all"]


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
def test_rules_that_are_not_rules_are_explained(client, demo_world, text, message):
    client.force_login(demo_world["owner"])
    page = client.post(RULES_PAGE, {"rules": text}).content.decode()
    assert message in page
    assert not EnvironmentRule.objects.exists()


def test_a_member_reads_the_rules_but_cannot_change_them(client, demo_world):
    EnvironmentRule.objects.create(
        tenant=demo_world["tenant"], position=1, condition="", namespace_template="payments-all"
    )
    client.force_login(demo_world["developer"])

    page = client.get(RULES_PAGE).content.decode()

    assert "payments-all" in page
    assert "<textarea" not in page
    assert "Only owners of payments and platform admins" in page
    assert client.post(RULES_PAGE, {"rules": ""}).status_code == 403
    assert EnvironmentRule.objects.count() == 1


def test_a_platform_admin_may_change_the_rules(client, demo_world):
    client.force_login(demo_world["admin"])
    response = client.post(RULES_PAGE, {"rules": "- namespace: payments-$ENV_SLUG\n"})
    assert response.status_code == 302
    assert EnvironmentRule.objects.get().namespace_template == "payments-$ENV_SLUG"


def test_trying_the_rules_shows_the_matching_rule_and_namespace(client, demo_world):
    services.replace_environment_rules(
        tenant=demo_world["tenant"],
        actor=demo_world["owner"],
        rules=[
            {"if": 'branch == "main"', "refuse": True, "message": "Not main."},
            {"namespace": "$TENANT-$PROJECT-mr-$MR_ID"},
        ],
    )
    client.force_login(demo_world["developer"])

    shown = client.get(
        RULES_PAGE,
        {"project": "checkout", "env_slug": "review-5", "branch": "feature/x", "mr_id": "5"},
    ).content.decode()
    refused = client.get(
        RULES_PAGE, {"project": "checkout", "env_slug": "review-5", "branch": "main"}
    ).content.decode()

    assert "payments-checkout-mr-5</code>" in shown and "Rule 2" in shown
    assert re.search(r"Refused by <a [^>]+>rule 1</a>", refused) and "Not main." in refused


def test_rules_page_of_another_tenant_is_404(client, demo_world):
    client.force_login(demo_world["outsider"])
    assert client.get(RULES_PAGE).status_code == 404
