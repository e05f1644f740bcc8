"""What Berth believes of a forge is the forge's answer, not what reaches it claiming to be
the forge: who closed a pull request is asked of the forge (a webhook's signed `sender` can
say anyone, for whoever holds the secret), and the address Berth links a pull request by is
kept only when it is http(s) on the forge's own host. In merge-request mode's world: the
forge stand-in speaking GitHub's API, checked against its OpenAPI description."""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import replace

import pytest

from tenants.models import PullRequest
from tests.provisioning.pull_requests.conftest import (
    HOOK_PATH,
    HOOK_SECRET,
    REPO,
    closed_event,
    opened,
)


def test_who_closed_it_is_the_forges_answer_not_the_webhooks_claim(forge_world, hooked, client):
    """Whoever holds the webhook secret can sign any sender: Berth asks the forge."""
    waiting = opened(forge_world)
    forge_world["forge"].close_as_reviewer(REPO, 1, "rita")
    claimed = json.loads(closed_event(forge_world, hooked).body)
    claimed["sender"]["login"] = "mallory"
    body = json.dumps(claimed).encode()
    signature = "sha256=" + hmac.new(HOOK_SECRET.encode(), body, hashlib.sha256).hexdigest()

    response = client.post(
        HOOK_PATH,
        data=body,
        content_type="application/json",
        HTTP_X_GITHUB_EVENT="pull_request",
        HTTP_X_HUB_SIGNATURE_256=signature,
    )

    assert response.status_code == 204
    assert PullRequest.objects.get(request=waiting).closed_by == "rita"
    waiting.refresh_from_db()
    assert "mallory" not in waiting.status_message


@pytest.mark.parametrize(
    "shown",
    ["javascript:alert(1)//github.com/acme/gitops/pull/1", "https://evil.example/acme/pull/1"],
    ids=["javascript-scheme", "another-host"],
)
def test_a_pull_request_address_off_the_forge_is_not_linked(forge_world, monkeypatch, shown):
    """The forge's html_url is shown as a link: only http(s) on the forge's own host."""
    from provisioning.gitops import forge as forge_module

    real = forge_module.state_of
    monkeypatch.setattr(forge_module, "state_of", lambda pull: replace(real(pull), url=shown))

    waiting = opened(forge_world)

    assert PullRequest.objects.get(request=waiting).url == ""
