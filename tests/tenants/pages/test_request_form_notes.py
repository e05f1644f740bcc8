"""The request form tells people what happens once they submit, as the kind declares it: an
ephemeral environment is usually approved at once, a namespace waits for its approval."""

from __future__ import annotations

import html

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("kind", "note", "not_said"),
    [
        ("namespace", "Nothing is created until the request is approved", "approved at once"),
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
