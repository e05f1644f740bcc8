"""The stand-in's GitLab routes, driven by python-gitlab as Berth drives a GitLab: a branch
pushed over git's HTTP protocol becomes a merge request, merged or closed through the API or
by a reviewer in the "web UI", each with GitLab's Merge Request Hook; what GitLab refuses,
refused as GitLab does. These routes need no OpenAPI description (GitLab has none)."""

from __future__ import annotations

import base64
from collections.abc import Iterator

import gitlab
import pytest
import requests
from gitlab.exceptions import GitlabCreateError, GitlabGetError, GitlabMRClosedError

from forgesandbox import ForgeSandbox
from tests.forgesandbox.conftest import REPO, TOKEN, HookReceiver, push_branch
from tests.support.gitserver import git


@pytest.fixture
def lab(plain_forge: ForgeSandbox) -> Iterator[gitlab.Gitlab]:
    client = gitlab.Gitlab(plain_forge.url + "/gitlab", private_token=plain_forge.token)
    yield client
    client.session.close()


def received_merge_request_hooks(forge: ForgeSandbox, receiver: HookReceiver) -> list[dict]:
    forge.deliveries()  # wait for what is queued
    return [
        {"action": r.payload["object_attributes"]["action"], "token": r.headers["X-Gitlab-Token"]}
        | {"state": r.payload["object_attributes"]["state"]}
        for r in receiver.received
        if r.headers.get("X-Gitlab-Event") == "Merge Request Hook"
    ]


def test_a_pushed_branch_becomes_a_merge_request_merged_by_the_api(
    plain_forge, lab, tmp_path, hook_receiver
):
    lab.auth()
    assert lab.user.username == plain_forge.user
    project = lab.projects.get(REPO)
    assert project.default_branch == "main"
    assert project.permissions["project_access"]["access_level"] == 40  # a Maintainer
    project.hooks.create(
        {"url": hook_receiver.url, "merge_requests_events": True, "token": "s3cret"}
    )
    head = push_branch(plain_forge, tmp_path / "work", "berth/request-7", {"a.yaml": "a: 1\n"})

    mr = project.mergerequests.create(
        {"source_branch": "berth/request-7", "target_branch": "main", "title": "Request 7"}
    )
    assert (mr.iid, mr.state, mr.sha) == (1, "opened", head)
    assert mr.detailed_merge_status == "mergeable"
    assert mr.web_url.endswith(f"/{REPO}/-/merge_requests/1")
    listed = project.mergerequests.list(state="opened", source_branch="berth/request-7")
    assert [each.iid for each in listed] == [1]

    mr.merge(merge_commit_message="Merge request 7")
    mr = project.mergerequests.get(1)
    assert mr.state == "merged" and mr.merged_by["username"] == plain_forge.user
    # The merge is on main, as the next clone over git sees it.
    work = tmp_path / "work"
    basic = base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode()
    git("-c", f"http.extraHeader=Authorization: Basic {basic}", "fetch", "-q", "origin", cwd=work)
    assert git("show", "origin/main:a.yaml", cwd=work) == "a: 1\n"
    assert git("rev-parse", "origin/main", cwd=work).strip() == mr.merge_commit_sha

    hooks = received_merge_request_hooks(plain_forge, hook_receiver)
    assert hooks == [
        {"action": "open", "token": "s3cret", "state": "opened"},
        {"action": "merge", "token": "s3cret", "state": "merged"},
    ]
    with pytest.raises(GitlabMRClosedError):  # merged once is merged
        mr.merge()


def test_a_reviewer_closes_it_in_the_web_ui_and_the_hook_says_who(
    plain_forge, lab, tmp_path, hook_receiver
):
    plain_forge.add_user("rev", "rev-token")
    plain_forge.grant(REPO, "rev", "maintain")
    project = lab.projects.get(REPO)
    project.hooks.create({"url": hook_receiver.url, "merge_requests_events": True, "token": "t"})
    push_branch(plain_forge, tmp_path / "work", "feature", {"b.yaml": "b: 2\n"})
    mr = project.mergerequests.create(
        {"source_branch": "feature", "target_branch": "main", "title": "B"}
    )
    plain_forge.close_as_reviewer(REPO, mr.iid, reviewer="rev")

    mr = project.mergerequests.get(mr.iid)
    assert mr.state == "closed" and mr.closed_by["username"] == "rev"
    assert [h["action"] for h in received_merge_request_hooks(plain_forge, hook_receiver)] == [
        "open",
        "close",
    ]
    # Reopened and closed again through the API.
    mr.state_event = "reopen"
    mr.save()
    assert project.mergerequests.get(mr.iid).state == "opened"
    mr.state_event = "close"
    mr.save()
    assert project.mergerequests.get(mr.iid).state == "closed"


def test_what_gitlab_refuses(plain_forge, lab, tmp_path):
    project = lab.projects.get(REPO)
    push_branch(plain_forge, tmp_path / "work", "feature", {"c.yaml": "c: 3\n"})
    project.mergerequests.create(
        {"source_branch": "feature", "target_branch": "main", "title": "C"}
    )
    with pytest.raises(GitlabCreateError) as twice:
        project.mergerequests.create(
            {"source_branch": "feature", "target_branch": "main", "title": "again"}
        )
    assert twice.value.response_code == 409
    assert "already exists for this source branch: !1" in str(twice.value)

    # What python-gitlab would not send: a missing title, and a parameter GitLab does not
    # take, refused rather than ignored, so a typo in a client shows.
    def create(body: dict) -> requests.Response:
        return requests.post(
            f"{plain_forge.url}/gitlab/api/v4/projects/{project.id}/merge_requests",
            json=body,
            headers={"PRIVATE-TOKEN": plain_forge.token},
            timeout=30,
        )

    missing = create({"source_branch": "feature", "target_branch": "main"})
    assert (missing.status_code, missing.json()) == (400, {"error": "title is missing"})
    typo = create({"source_branch": "feature", "target_branch": "main", "titel": "t", "title": "x"})
    assert typo.status_code == 400 and "titel" in typo.json()["error"]

    # Someone who may only read cannot merge; someone with no access does not see it.
    plain_forge.add_user("reader", "reader-token")
    plain_forge.grant(REPO, "reader", "read")
    as_reader = gitlab.Gitlab(plain_forge.url + "/gitlab", private_token="reader-token")
    # GitLab answers 401 to a merge by someone who may not merge.
    with pytest.raises(gitlab.exceptions.GitlabAuthenticationError) as refused:
        as_reader.projects.get(REPO, lazy=True).mergerequests.get(1, lazy=True).merge()
    assert refused.value.response_code == 401
    plain_forge.add_user("stranger", "stranger-token")
    as_stranger = gitlab.Gitlab(plain_forge.url + "/gitlab", private_token="stranger-token")
    with pytest.raises(GitlabGetError) as hidden:
        as_stranger.projects.get(REPO)
    assert hidden.value.response_code == 404
    with pytest.raises(gitlab.exceptions.GitlabAuthenticationError):
        gitlab.Gitlab(plain_forge.url + "/gitlab", private_token="wrong").auth()
    member = project.members_all.get(plain_forge.forge.users["reader"].id)
    assert member.access_level == 20  # a reporter


def test_a_conflict_cannot_be_merged_and_a_moved_head_is_409(plain_forge, lab, tmp_path):
    project = lab.projects.get(REPO)
    push_branch(plain_forge, tmp_path / "work", "feature", {"README.md": "ours\n"})
    mr = project.mergerequests.create(
        {"source_branch": "feature", "target_branch": "main", "title": "D"}
    )
    with pytest.raises(GitlabMRClosedError) as moved:
        mr.merge(sha="0" * 40)
    assert moved.value.response_code == 409
    plain_forge.push_commit(REPO, "main", {"README.md": "theirs\n"})
    mr = project.mergerequests.get(mr.iid)
    assert mr.has_conflicts and mr.detailed_merge_status == "conflict"
    with pytest.raises(GitlabMRClosedError) as conflict:
        mr.merge()
    assert conflict.value.response_code == 422
