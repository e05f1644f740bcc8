"""Merge-request mode on Gitea (and Forgejo, whose API is the same): the same path through
Gitea's REST API with `requests` against the forge stand-in's Gitea routes (held to the
parameters Gitea documents): a pull request opened from `berth/request-<id>`, merged on the
forge → Ready; closed → back to the requester; Gitea's signed webhook believed only under the
tenant's secret; a token that may not push is told at the repository check."""

from __future__ import annotations

import hashlib
import hmac

import pytest
import requests

from provisioning.gitops.forge import Forge, ForgeError, open_pull, read_pull
from provisioning.reconcile.pull_requests import poll_pull_requests
from tenants.choices import RequestState
from tenants.models import PullRequest
from tests.forgesandbox.conftest import hook_receiver  # noqa: F401 - fixture
from tests.support.gitserver import files_on

from .conftest import HOOK_SECRET, REPO, TOKEN, opened, world_on
from .test_merge_request_mode import converge


@pytest.fixture
def gitea_world(db, sandbox, plain_forge, settings):
    return world_on(
        sandbox, plain_forge, settings, kind="gitea", api_url=f"{plain_forge.url}/gitea"
    )


def test_a_pull_request_merged_on_gitea_lets_the_request_go_on_to_ready(gitea_world):
    waiting = opened(gitea_world)
    row = PullRequest.objects.get(request=waiting)
    assert (row.number, row.branch) == (1, f"berth/request-{waiting.pk}")
    assert row.url.endswith(f"/gitea/{REPO}/pulls/1")

    gitea_world["forge"].merge_as_reviewer(REPO, 1, "rita")
    assert poll_pull_requests() == {waiting.pk: "merged"}

    assert converge(waiting).state == RequestState.READY
    assert "apps/shop/dev/application.yaml" in files_on(gitea_world["forge"].repo(REPO).git.path)
    assert PullRequest.objects.get(request=waiting).merged_by == "rita"
    gitea_calls = [r for r in gitea_world["forge"].requests() if r["path"].startswith("/gitea/")]
    assert gitea_calls and all(r["status"] < 400 for r in gitea_calls), gitea_calls


def test_a_pull_request_closed_on_gitea_sends_the_request_back(gitea_world):
    waiting = opened(gitea_world)
    gitea_world["forge"].close_as_reviewer(REPO, 1, "rita")

    assert poll_pull_requests() == {waiting.pk: "closed"}
    waiting.refresh_from_db()
    assert waiting.state == RequestState.RETURNED
    assert "closed without merging" in waiting.status_message


def test_opening_again_finds_the_pull_request_already_open_and_errors_hide_the_token(gitea_world):
    forge = gitea_world["forge"]
    forge.push_commit(REPO, "topic", {"t.yaml": "t: 1\n"})
    tea = Forge(api_url=f"{forge.url}/gitea/api/v1", repository=REPO, token=TOKEN, kind="gitea")

    first = open_pull(tea, head="topic", base="main", title="Topic", body="why")
    again = open_pull(tea, head="topic", base="main", title="Topic", body="why")
    assert (first.number, first.state, again.number) == (1, "open", 1)
    assert read_pull(tea, 1).head_sha == forge.repo(REPO).git.branch_sha("topic")

    with pytest.raises(ForgeError) as missing:
        read_pull(Forge(tea.api_url, "acme/nothing", TOKEN, "gitea"), 1)
    assert missing.value.status == 404 and not missing.value.transient
    assert TOKEN not in missing.value.message
    with pytest.raises(ForgeError) as refused:
        read_pull(Forge(tea.api_url, REPO, "not-a-token", "gitea"), 1)
    assert refused.value.status == 401


def test_a_gitea_token_that_may_not_push_is_told_at_the_repository_check(gitea_world):
    from provisioning.previews import check_repository

    assert check_repository(gitea_world["tenant"]).ok
    gitea_world["forge"].grant(REPO, gitea_world["forge"].user, "read")

    checked = check_repository(gitea_world["tenant"])
    assert not checked.ok and f"may not write {REPO}" in checked.message


def test_gitea_s_signed_pull_request_event_moves_the_request(
    gitea_world,
    hook_receiver,  # noqa: F811 - the fixture imported above
    client,
):
    forge = gitea_world["forge"]
    made = requests.post(
        f"{forge.url}/gitea/api/v1/repos/{REPO}/hooks",
        headers={"Authorization": f"token {TOKEN}"},
        json={
            "type": "gitea",
            "config": {"url": hook_receiver.url, "content_type": "json", "secret": HOOK_SECRET},
            "events": ["pull_request"],
            "active": True,
        },
        timeout=10,
    )
    assert made.status_code == 201, made.text
    waiting = opened(gitea_world)
    forge.merge_as_reviewer(REPO, 1, "rita")
    forge.deliveries()
    (merged,) = [
        r
        for r in hook_receiver.received
        if r.headers.get("X-Gitea-Event") == "pull_request" and r.payload["action"] == "closed"
    ]

    def deliver(signature: str):
        return client.post(
            "/tenants/payments/forge-hook/",
            data=merged.body,
            content_type="application/json",
            HTTP_X_GITEA_EVENT="pull_request",
            HTTP_X_GITEA_SIGNATURE=signature,
        )

    wrong = hmac.new(b"not-the-secret", merged.body, hashlib.sha256).hexdigest()
    assert deliver(wrong).status_code == 403
    assert deliver("").status_code == 403
    waiting.refresh_from_db()
    assert waiting.state == RequestState.AWAITING_MERGE
    assert deliver(merged.headers["X-Gitea-Signature"]).status_code == 204
    waiting.refresh_from_db()
    assert waiting.state == RequestState.PROVISIONING
    assert "merged by rita" in waiting.status_message


@pytest.mark.parametrize("kind", ["gitea", "gitlab"])
def test_a_forge_api_url_on_a_network_berth_may_not_reach_is_never_called(
    gitea_world, settings, kind
):
    forge = gitea_world["forge"]
    settings.BERTH_EGRESS_ALLOW = []
    elsewhere = Forge(api_url=f"{forge.url}/{kind}", repository=REPO, token=TOKEN, kind=kind)
    before = len(forge.requests())

    with pytest.raises(ForgeError) as refused:
        read_pull(elsewhere, 1)
    assert "refused" in refused.value.message and not refused.value.transient
    assert len(forge.requests()) == before
