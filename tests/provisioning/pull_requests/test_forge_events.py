"""What the forge says, heard two ways: its signed `pull_request` webhook (the delivery the
forge stand-in made, replayed to Berth's endpoint as it came) and, when no webhook comes,
beat's polling of the requests awaiting a merge. A base branch that moved underneath is
rendered again and force-pushed, or the pull request says why it cannot be."""

from __future__ import annotations

import hashlib
import hmac
import json

from provisioning.reconcile.pull_requests import poll_pull_requests
from tenants.choices import RequestState
from tenants.models import PullRequest, Request
from tests.support.gitserver import commits_on, files_on

from .conftest import HOOK_PATH, HOOK_SECRET, REPO, Received, closed_event, opened
from .test_merge_request_mode import converge


def deliver(client, delivery: Received, *, signature: str | None = None):
    return client.post(
        HOOK_PATH,
        data=delivery.body,
        content_type="application/json",
        HTTP_X_GITHUB_EVENT=delivery.event,
        HTTP_X_HUB_SIGNATURE_256=(
            delivery.headers["X-Hub-Signature-256"] if signature is None else signature
        ),
    )


def test_the_forge_s_merge_webhook_lets_the_request_go_on_to_ready(forge_world, hooked, client):
    waiting = opened(forge_world)
    forge_world["forge"].merge_as_reviewer(REPO, 1, "rita")

    answer = deliver(client, closed_event(forge_world, hooked))

    assert answer.status_code == 204
    waiting.refresh_from_db()
    assert waiting.state == RequestState.PROVISIONING
    assert converge(waiting).state == RequestState.READY
    assert poll_pull_requests() == {}  # nothing awaits a merge any more: the forge is not asked


def test_the_forge_s_close_webhook_sends_the_request_back_naming_who_closed_it(
    forge_world, hooked, client
):
    waiting = opened(forge_world)
    forge_world["forge"].close_as_reviewer(REPO, 1, "rita")

    assert deliver(client, closed_event(forge_world, hooked)).status_code == 204

    waiting.refresh_from_db()
    assert waiting.state == RequestState.RETURNED
    assert "closed without merging by rita" in waiting.status_message
    assert PullRequest.objects.get(request=waiting).closed_by == "rita"
    # Said twice (the poll after the webhook), it is done once.
    assert poll_pull_requests() == {}
    assert deliver(client, closed_event(forge_world, hooked)).status_code == 204


def test_a_webhook_with_a_bad_signature_is_refused_and_changes_nothing(forge_world, hooked, client):
    waiting = opened(forge_world)
    forge_world["forge"].merge_as_reviewer(REPO, 1, "rita")
    delivery = closed_event(forge_world, hooked)
    forged = "sha256=" + hmac.new(b"not-the-secret", delivery.body, hashlib.sha256).hexdigest()

    assert deliver(client, delivery, signature=forged).status_code == 403
    assert deliver(client, delivery, signature="").status_code == 403
    waiting.refresh_from_db()
    assert waiting.state == RequestState.AWAITING_MERGE


def test_a_signed_event_for_a_pull_request_berth_did_not_open_is_404(forge_world, hooked, client):
    opened(forge_world)
    forge_world["forge"].close_as_reviewer(REPO, 1, "rita")
    delivery = closed_event(forge_world, hooked)
    payload = json.loads(delivery.body)
    payload["pull_request"]["number"] = 99
    body = json.dumps(payload).encode()
    signature = "sha256=" + hmac.new(HOOK_SECRET.encode(), body, hashlib.sha256).hexdigest()

    answer = deliver(client, Received(delivery.headers, body), signature=signature)

    assert answer.status_code == 404


def test_a_signed_merge_the_forge_did_not_make_lets_nothing_go_on(forge_world, hooked, client):
    """Whoever holds the webhook secret (a repository admin who set the hook up) signs an
    event saying the pull request was merged; the forge, asked with Berth's token, says it
    is still open, so the request keeps waiting and nothing reaches the cluster."""
    waiting = opened(forge_world)
    forge_world["forge"].deliveries()
    (opening,) = [e for e in hooked.events("pull_request") if e.payload["action"] == "opened"]
    payload = json.loads(opening.body)
    payload["action"] = "closed"
    payload["pull_request"].update(state="closed", merged=True, merge_commit_sha="f" * 40)
    body = json.dumps(payload).encode()
    signature = "sha256=" + hmac.new(HOOK_SECRET.encode(), body, hashlib.sha256).hexdigest()

    answer = deliver(client, Received(opening.headers, body), signature=signature)

    assert answer.status_code == 204  # heard, signed: not the forge's to retry
    waiting.refresh_from_db()
    assert waiting.state == RequestState.AWAITING_MERGE
    assert PullRequest.objects.get(request=waiting).state == "open"
    # The real merge, when a reviewer makes it, still lets it go on.
    forge_world["forge"].merge_as_reviewer(REPO, 1, "rita")
    assert deliver(client, closed_event(forge_world, hooked)).status_code == 204
    assert converge(waiting).state == RequestState.READY


def test_polling_notices_a_merge_when_no_webhook_came(forge_world):
    waiting = opened(forge_world)
    forge_world["forge"].merge_as_reviewer(REPO, 1, "rita")
    assert Request.objects.get(pk=waiting.pk).state == RequestState.AWAITING_MERGE

    assert poll_pull_requests() == {waiting.pk: "merged"}

    assert converge(waiting).state == RequestState.READY


def test_a_base_that_moved_underneath_is_rendered_again_and_the_branch_force_pushed(forge_world):
    waiting = opened(forge_world)
    forge = forge_world["forge"]
    before = PullRequest.objects.get(request=waiting)
    moved = forge.push_commit(REPO, "main", {"README.md": "moved underneath\n"})

    result = poll_pull_requests()

    assert result == {waiting.pk: f"rebased on {moved[:12]}"}
    after = PullRequest.objects.get(request=waiting)
    assert after.head_sha != before.head_sha and after.base_sha == moved
    bare = forge.repo(REPO).git.path
    assert forge.repo(REPO).git.parents(after.head_sha) == [moved]  # one commit on the new base
    assert files_on(bare, after.branch)["README.md"] == "moved underneath\n"
    assert poll_pull_requests() == {waiting.pk: "open"}  # nothing moved since
    forge.merge_as_reviewer(REPO, 1, "rita")
    assert poll_pull_requests() == {waiting.pk: "merged"}
    assert converge(waiting).state == RequestState.READY
    assert commits_on(bare)[0]["subject"].startswith("Merge pull request #1")


def test_a_base_that_already_holds_the_change_is_said_and_not_rebased(forge_world):
    waiting = opened(forge_world)
    forge = forge_world["forge"]
    row = PullRequest.objects.get(request=waiting)
    bare = forge.repo(REPO).git.path
    forge.push_commit(REPO, "main", files_on(bare, row.branch), message="Done by hand")

    (said,) = poll_pull_requests().values()

    assert said.startswith("not rebased: main already holds what this pull request changes")
    row.refresh_from_db()
    assert "already holds" in row.rebase_problem
    assert Request.objects.get(pk=waiting.pk).state == RequestState.AWAITING_MERGE


def test_a_pull_request_the_forge_no_longer_knows_sends_the_request_back(forge_world):
    waiting = opened(forge_world)
    # The forge forgot it (deleted, the repository made anew): it answers 404 for its number.
    PullRequest.objects.filter(request=waiting).update(number=42)

    assert poll_pull_requests() == {waiting.pk: "closed"}

    waiting.refresh_from_db()
    assert waiting.state == RequestState.RETURNED
    assert "no longer knows pull request #42" in waiting.status_message
