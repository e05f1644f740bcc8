"""Merge-request mode on GitLab: the same path through python-gitlab against the forge
stand-in's GitLab routes (held to the parameters GitLab documents; GitLab has no OpenAPI
description): a merge request opened from `berth/request-<id>`, merged on the forge → Ready;
closed → back to the requester; a token below Developer is told at the repository check."""

from __future__ import annotations

import pytest

from provisioning.reconcile.pull_requests import poll_pull_requests
from tenants.choices import RequestState
from tenants.models import PullRequest
from tests.forgesandbox.conftest import hook_receiver  # noqa: F401 - fixture
from tests.support.gitserver import files_on

from .conftest import REPO, TOKEN, opened, world_on
from .test_merge_request_mode import converge


@pytest.fixture
def gitlab_world(db, sandbox, plain_forge, settings):
    return world_on(
        sandbox, plain_forge, settings, kind="gitlab", api_url=f"{plain_forge.url}/gitlab"
    )


def test_a_merge_request_merged_on_gitlab_lets_the_request_go_on_to_ready(gitlab_world):
    waiting = opened(gitlab_world)
    row = PullRequest.objects.get(request=waiting)
    assert (row.number, row.branch) == (1, f"berth/request-{waiting.pk}")
    assert "/merge_requests/1" in row.url

    gitlab_world["forge"].merge_as_reviewer(REPO, 1, "rita")
    assert poll_pull_requests() == {waiting.pk: "merged"}

    assert converge(waiting).state == RequestState.READY
    assert "apps/shop/dev/application.yaml" in files_on(gitlab_world["forge"].repo(REPO).git.path)
    assert PullRequest.objects.get(request=waiting).merged_by == "rita"


def test_a_merge_request_closed_on_gitlab_sends_the_request_back(gitlab_world):
    waiting = opened(gitlab_world)
    gitlab_world["forge"].close_as_reviewer(REPO, 1, "rita")

    assert poll_pull_requests() == {waiting.pk: "closed"}
    waiting.refresh_from_db()
    assert waiting.state == RequestState.RETURNED


def test_a_gitlab_token_below_developer_is_told_at_the_repository_check(gitlab_world):
    from provisioning.previews import check_repository

    assert check_repository(gitlab_world["tenant"]).ok
    gitlab_world["forge"].grant(REPO, gitlab_world["forge"].user, "read")  # a Reporter

    checked = check_repository(gitlab_world["tenant"])
    assert not checked.ok and f"may not write {REPO}" in checked.message


def test_gitlab_s_merge_request_hook_carrying_the_secret_moves_the_request(
    gitlab_world,
    hook_receiver,  # noqa: F811 - the fixture imported above
    client,
):
    import gitlab as python_gitlab

    from .conftest import HOOK_SECRET

    forge = gitlab_world["forge"]
    lab = python_gitlab.Gitlab(f"{forge.url}/gitlab", private_token=TOKEN)
    lab.projects.get(REPO).hooks.create(
        {"url": hook_receiver.url, "merge_requests_events": True, "token": HOOK_SECRET}
    )
    lab.session.close()
    waiting = opened(gitlab_world)
    forge.merge_as_reviewer(REPO, 1, "rita")
    forge.deliveries()
    (merged,) = [
        r
        for r in hook_receiver.received
        if r.headers.get("X-Gitlab-Event") == "Merge Request Hook"
        and r.payload["object_attributes"]["action"] == "merge"
    ]

    def deliver(token: str):
        return client.post(
            "/tenants/payments/forge-hook/",
            data=merged.body,
            content_type="application/json",
            HTTP_X_GITLAB_EVENT="Merge Request Hook",
            HTTP_X_GITLAB_TOKEN=token,
        )

    assert deliver("not-the-secret").status_code == 403
    assert deliver(merged.headers["X-Gitlab-Token"]).status_code == 204
    waiting.refresh_from_db()
    assert waiting.state == RequestState.PROVISIONING
    assert "merged by rita" in waiting.status_message
