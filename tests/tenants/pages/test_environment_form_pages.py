"""Starting an ephemeral environment from the browser: the request menu and form, a
refusal shown with what was typed kept, and the preview of the namespace an environment
would get and the rule that chose it."""

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from tenants.models import EnvironmentRule, EphemeralEnvironment

# The environments here are of payments' checkout project.
pytestmark = pytest.mark.usefixtures("checkout")


FORM = "/tenants/payments/request/ephemeral/"
PREVIEW = "/tenants/payments/environment-preview/"
# The fields a review environment needs; the form's others may be left out.
REVIEW_9 = {"project": "checkout", "env_slug": "review-9", "ttl": "4h", "tier": "review"}


def first_rule(demo_world, condition: str, **fields) -> EnvironmentRule:
    """Payments' first environment rule: the one every environment is tried against first."""
    return EnvironmentRule.objects.create(
        tenant=demo_world["tenant"], position=1, condition=condition, **fields
    )


# --- starting one from the web ----------------------------------------------------------------


def test_request_menu_offers_an_ephemeral_environment(client, demo_world):
    client.force_login(demo_world["developer"])
    page = client.get("/tenants/payments/request/").content.decode()
    assert f'href="{FORM}"' in page


def test_member_starts_an_environment_from_the_form(client, demo_world):
    client.force_login(demo_world["developer"])
    form = client.get(FORM).content.decode()
    assert f'data-preview-url="{PREVIEW}"' in form
    assert "14d" in form  # the review tier's maximum TTL

    response = client.post(
        FORM,
        {
            **REVIEW_9,
            "branch": "fix/typo",
            "mr_id": "9",
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


def test_form_shows_a_refusal_and_keeps_what_was_typed(client, demo_world):
    first_rule(demo_world, "true", refuse=True, message="Review apps are paused this week.")
    client.force_login(demo_world["developer"])
    response = client.post(FORM, REVIEW_9)
    page = response.content.decode()
    assert response.status_code == 200
    assert "Review apps are paused this week." in page
    assert 'value="review-9"' in page
    assert not EphemeralEnvironment.objects.exists()


def test_preview_shows_the_namespace_and_the_rule_that_chose_it(client, demo_world):
    first_rule(
        demo_world, 'env_slug.startsWith("review")', namespace_template="payments-review-apps"
    )
    client.force_login(demo_world["developer"])

    page = client.get(PREVIEW, {"project": "checkout", "env_slug": "review-3"}).content.decode()

    assert "payments-review-apps</code>" in page
    assert "Rule 1" in page
    assert "Shared" in page


def test_preview_shows_a_long_env_slug_shortened_with_a_hash(client, demo_world):
    client.force_login(demo_world["developer"])
    slug = "review-a-very-long-branch-name-for-the-quarterly-reports-cart"

    page = client.get(PREVIEW, {"project": "checkout", "env_slug": slug}).content.decode()

    # Its first 50 characters, then 48 bits of the SHA-256 of the whole name.
    assert re.search(
        r"payments-checkout-review-a-very-long-branch-name-f-[0-9a-f]{12}</code>", page
    )
    assert "63 of 63 characters" in page
    assert "shortened with a stable hash" in page
    assert "The default template" in page


def test_preview_says_when_no_rule_matches(client, demo_world):
    first_rule(demo_world, 'branch == "x"', namespace_template="payments-x")
    client.force_login(demo_world["developer"])
    page = client.get(PREVIEW, {"project": "checkout", "env_slug": "review-3"}).content.decode()
    assert "No environment rule matches" in page


def test_preview_of_another_tenant_is_404(client, demo_world):
    client.force_login(demo_world["outsider"])
    assert client.get(PREVIEW, {"project": "checkout", "env_slug": "r"}).status_code == 404
