"""Merge-request mode from end to end against the forge stand-in (GitHub's REST API, checked
against GitHub's OpenAPI description): a request approved in a tenant that wants reviews
opens a pull request from `berth/request-<id>` and waits; merged on the forge, it goes on to
Ready; closed, it goes back to its requester with who closed it."""

from __future__ import annotations

from provisioning import reconcile
from provisioning.reconcile.pull_requests import poll_pull_requests
from tenants.choices import NamespaceState, PullRequestState, RequestState
from tenants.models import AuditEvent, Namespace, PullRequest, Request
from tests.support.gitserver import files_on

from .conftest import REPO, opened


def converge(tenancy_request: Request) -> Request:
    reconcile.converge(request_id=tenancy_request.pk, worker="mr-test")
    tenancy_request.refresh_from_db()
    return tenancy_request


def test_an_approved_request_opens_a_pull_request_and_applies_nothing_before_the_merge(
    forge_world, sandbox
):
    waiting = opened(forge_world)
    forge = forge_world["forge"]
    pull = PullRequest.objects.get(request=waiting)
    assert (pull.number, pull.branch, pull.base, pull.state) == (
        1,
        f"berth/request-{waiting.pk}",
        "main",
        PullRequestState.OPEN,
    )
    assert pull.url in waiting.status_message
    bare = forge.repo(REPO).git.path
    on_branch = files_on(bare, pull.branch)
    assert "apps/shop/dev/application.yaml" in on_branch
    assert set(files_on(bare)) == {"README.md"}  # main has nothing of it yet
    # Nothing reached the cluster: the namespace waits for the merge.
    assert not sandbox.get("Namespace", "payments-shop-dev")
    assert Namespace.objects.get(name="payments-shop-dev").state == NamespaceState.REQUESTED
    (created,) = [r for r in forge.requests() if r["method"] == "POST" and "/pulls" in r["path"]]
    assert created["status"] == 201


def test_merged_on_the_forge_the_request_goes_on_to_ready(forge_world, sandbox):
    waiting = opened(forge_world)
    forge = forge_world["forge"]
    merge_sha = forge.merge_as_reviewer(REPO, 1, "rita")

    assert poll_pull_requests() == {waiting.pk: "merged"}
    waiting.refresh_from_db()
    assert waiting.state == RequestState.PROVISIONING
    assert "merged by rita" in waiting.status_message
    done = converge(waiting)

    assert done.state == RequestState.READY, done.status_message
    assert sandbox.get("Namespace", "payments-shop-dev")
    assert Namespace.objects.get(name="payments-shop-dev").state == NamespaceState.ACTIVE
    pull = PullRequest.objects.get(request=done)
    assert (pull.state, pull.merged_by, pull.merge_sha) == ("merged", "rita", merge_sha)
    assert "apps/shop/dev/application.yaml" in files_on(forge.repo(REPO).git.path)
    (commit,) = done.git_commits.all()
    assert (commit.branch, commit.sha) == ("main", pull.head_sha)
    git_step = done.runs.get().steps[-1]
    assert git_step["outcome"] == "committed"
    assert "merged by rita" in git_step["message"]


def test_closed_without_merging_the_request_goes_back_to_its_requester(forge_world, sandbox):
    waiting = opened(forge_world)
    forge_world["forge"].close_as_reviewer(REPO, 1, "rita")

    assert poll_pull_requests() == {waiting.pk: "closed"}
    waiting.refresh_from_db()
    assert waiting.state == RequestState.RETURNED
    assert "closed without merging" in waiting.status_message
    assert waiting.runs.get().state == "failed"
    assert not Namespace.objects.filter(name="payments-shop-dev").exists()  # the name is free
    event = AuditEvent.objects.get(action="request.return_unmerged")
    assert event.after["pull_request"].endswith("/pull/1")
    assert not sandbox.get("Namespace", "payments-shop-dev")


def test_the_request_page_and_the_api_show_the_request_awaiting_merge_with_its_link(
    forge_world, client
):
    from tests.support.api import api

    waiting = opened(forge_world)
    pull = PullRequest.objects.get(request=waiting)
    client.force_login(forge_world["owner"])

    page = client.get(f"/requests/{waiting.pk}/").content.decode()
    assert "Awaiting merge" in page
    assert f'href="{pull.url}"' in page and f"{REPO}#1" in page
    assert "the request goes on once a reviewer merges it" in page
    body = api(forge_world["owner"]).get(f"/api/v1/requests/{waiting.pk}/").json()
    assert body["state"] == "awaiting_merge" and body["state_label"] == "Awaiting merge"
    assert body["pull_request"]["url"] == pull.url
    assert body["pull_request"]["state"] == "open"
    assert body["pull_request"]["branch"] == f"berth/request-{waiting.pk}"

    forge_world["forge"].close_as_reviewer(REPO, 1, "rita")
    poll_pull_requests()
    body = api(forge_world["owner"]).get(f"/api/v1/requests/{waiting.pk}/").json()
    assert (body["state"], body["state_label"]) == ("returned", "Returned (pull request closed)")
    assert body["pull_request"]["state"] == "closed"
    assert "closed without merging" in body["pull_request"]["reason"]
    page = client.get(f"/requests/{waiting.pk}/").content.decode()
    assert "Returned (pull request closed)" in page and "closed without merging" in page


def test_the_repository_check_asks_the_forge_whether_its_token_may_open_pull_requests(forge_world):
    from provisioning.previews import check_repository

    tenant = forge_world["tenant"]
    checked = check_repository(tenant)
    assert checked.ok, checked.message
    assert "open pull requests on the forge" in checked.message

    forge_world["forge"].grant(
        REPO, forge_world["forge"].user, "read"
    )  # the token may read only now
    checked = check_repository(tenant)

    assert not checked.ok
    assert "not open its pull requests" in checked.message
    assert f"may not write {REPO}" in checked.message
