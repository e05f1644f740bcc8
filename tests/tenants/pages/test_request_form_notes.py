"""The request form tells people what happens once they submit, as the kind declares it: an
ephemeral environment is usually approved at once, a namespace waits for its approval; a
project starts on its lowest tier only, and beside the tiers the form says what each one
brings (who approves it, and a pull request where the tenant is in merge-request mode)."""

from __future__ import annotations

import html
import re

import pytest
from django.urls import reverse

from tenants.choices import Role
from tenants.models import EnvironmentTier, Membership, Tenant
from tests.support.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("kind", "note", "not_said"),
    [
        # (Its tiers' notes say dev is approved at once: that is the rules', not the kind's.)
        (
            "namespace",
            "Nothing is created until the request is approved",
            "within the tenant's budget is approved at once",
        ),
        (
            "ephemeral",
            "by default one within the tenant's budget is approved at once",
            "Nothing is created",
        ),
    ],
)
def test_the_form_says_what_happens_after_submitting(client, demo_world, kind, note, not_said):
    client.force_login(demo_world["developer"])
    page = client.get(reverse("request-form", args=["payments", kind]))
    assert page.status_code == 200
    text = html.unescape(page.content.decode())
    assert note in text
    assert not_said not in text


# --- which tiers a form starts on, and what each one implies -----------------------------------


def ticked_tiers(page: str) -> list[str]:
    boxes = re.findall(r'<input type="checkbox" name="tiers" value="([a-z]+)"[^>]*>', page)
    return [
        slug
        for slug in boxes
        if re.search(rf'<input type="checkbox" name="tiers" value="{slug}"[^>]*\bchecked\b', page)
    ]


def notes(page: str, field: str) -> list[str]:
    listed = page.split(f'id="id_{field}_notes">')[1].split("</ul>")[0]
    return [html.unescape(item) for item in re.findall(r"<li>(.*?)</li>", listed)]


def test_the_project_form_ticks_only_the_lowest_tier(client, demo_world):
    client.force_login(demo_world["developer"])
    page = client.get(reverse("request-form", args=["payments", "project"])).content.decode()

    assert ticked_tiers(page) == ["dev"]
    assert {"dev", "staging", "prod"} <= set(re.findall(r'name="tiers" value="([a-z]+)"', page))


def test_without_dev_the_project_form_ticks_the_first_tier_meant_to_stay(client, demo_world):
    tenant = demo_world["tenant"]
    tenant.allowed_tiers.remove(EnvironmentTier.objects.get(slug="dev"))
    client.force_login(demo_world["developer"])
    page = client.get(reverse("request-form", args=["payments", "project"])).content.decode()

    assert ticked_tiers(page) == ["staging"]  # not review, which comes first but expires


def test_the_form_says_prod_waits_for_a_platform_admin_and_dev_for_nobody(client, demo_world):
    client.force_login(demo_world["developer"])
    for kind, field in (("project", "tiers"), ("namespace", "tier")):
        page = client.get(reverse("request-form", args=["payments", kind])).content.decode()

        said = notes(page, field)
        assert "Development: approved at once (within the budget)" in said
        assert "Staging: waits for a tenant owner to approve it" in said
        assert "Production: waits for a platform admin to approve it" in said
        assert not any("pull request" in note for note in said)  # payments pushes directly


def test_in_merge_request_mode_the_form_says_prod_waits_for_a_pull_request_too(client, demo_world):
    Tenant.objects.filter(slug="payments").update(
        gitops_repo_url="https://git.example.com/payments/gitops.git",
        changes_by_pull_request=True,
    )
    EnvironmentTier.objects.filter(slug="dev").update(changes_by_pull_request=False)
    client.force_login(demo_world["developer"])
    page = client.get(reverse("request-form", args=["payments", "project"])).content.decode()

    said = {note.split(":")[0]: note for note in notes(page, "tiers")}
    assert said["Production"] == (
        "Production: waits for a platform admin to approve it; then its GitOps change waits "
        "in a pull request on the tenant's repository until someone merges it"
    )
    assert "pull request" not in said["Development"]  # the tier's own setting wins


def test_a_viewer_reads_that_their_request_would_be_refused(client, demo_world):
    viewer = UserFactory(username="vera")
    Membership.objects.create(user=viewer, tenant=demo_world["tenant"], role=Role.VIEWER)
    client.force_login(viewer)
    page = client.get(reverse("request-form", args=["payments", "project"])).content.decode()

    assert "Production: refused: Viewers cannot make requests" in " ".join(notes(page, "tiers"))
