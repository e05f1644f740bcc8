"""The stand-in's Gitea routes (Forgejo's API is the same), driven with plain `requests` as
Berth drives a Gitea: a branch pushed over git's HTTP protocol becomes a pull request, merged
or closed through the API or by a reviewer in the "web UI", each with Gitea's signed
`pull_request` webhook; what Gitea refuses, refused as Gitea does."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterator

import pytest
import requests

from forgesandbox import ForgeSandbox
from tests.forgesandbox.conftest import REPO, TOKEN, HookReceiver, push_branch

SECRET = "gitea-hook-secret"


@pytest.fixture
def tea(plain_forge: ForgeSandbox) -> Iterator[Gitea]:
    client = Gitea(plain_forge.url + "/gitea/api/v1", plain_forge.token)
    yield client
    client.session.close()


class Gitea:
    def __init__(self, root: str, token: str) -> None:
        self.root = root
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"token {token}"

    def __call__(self, method: str, path: str, **kwargs) -> requests.Response:
        return self.session.request(method, self.root + path, timeout=10, **kwargs)


def gitea_hooks(forge: ForgeSandbox, receiver: HookReceiver) -> list[dict]:
    forge.deliveries()  # wait for what is queued
    return [
        {
            "action": r.payload["action"],
            "merged": r.payload["pull_request"]["merged"],
            "signed": hmac.compare_digest(
                r.headers["X-Gitea-Signature"],
                hmac.new(SECRET.encode(), r.body, hashlib.sha256).hexdigest(),
            ),
        }
        for r in receiver.received
        if r.headers.get("X-Gitea-Event") == "pull_request"
    ]


def hooked(tea: Gitea, receiver: HookReceiver) -> None:
    made = tea(
        "POST",
        f"/repos/{REPO}/hooks",
        json={
            "type": "gitea",
            "config": {"url": receiver.url, "content_type": "json", "secret": SECRET},
            "events": ["pull_request"],
            "active": True,
        },
    )
    assert made.status_code == 201, made.text
    assert made.json()["config"] == {"url": receiver.url, "content_type": "json"}


def test_a_pushed_branch_becomes_a_pull_request_merged_through_the_api(
    plain_forge, tea, tmp_path, hook_receiver
):
    assert tea("GET", "/user").json()["login"] == plain_forge.user
    repo = tea("GET", f"/repos/{REPO}").json()
    assert repo["permissions"] == {"admin": True, "push": True, "pull": True}
    hooked(tea, hook_receiver)
    head = push_branch(plain_forge, tmp_path / "work", "berth/request-1", {"a.yaml": "a: 1\n"})

    made = tea(
        "POST",
        f"/repos/{REPO}/pulls",
        json={"head": "berth/request-1", "base": "main", "title": "Add a", "body": "why"},
    )
    assert made.status_code == 201, made.text
    pull = made.json()
    assert (pull["number"], pull["state"], pull["merged"]) == (1, "open", False)
    assert pull["head"] == pull["head"] | {"ref": "berth/request-1", "sha": head}
    assert pull["html_url"].endswith(f"/gitea/{REPO}/pulls/1") and pull["mergeable"]

    stale = tea(
        "POST", f"/repos/{REPO}/pulls/1/merge", json={"Do": "merge", "head_commit_id": "0" * 40}
    )
    assert stale.status_code == 409
    merged = tea(
        "POST", f"/repos/{REPO}/pulls/1/merge", json={"Do": "merge", "head_commit_id": head}
    )
    assert merged.status_code == 200, merged.text

    after = tea("GET", f"/repos/{REPO}/pulls/1").json()
    assert (after["state"], after["merged"], after["merged_by"]["login"]) == (
        "closed",
        True,
        plain_forge.user,
    )
    assert after["merge_commit_sha"] == plain_forge.repo(REPO).git.branch_sha("main")
    again = tea("POST", f"/repos/{REPO}/pulls/1/merge", json={"Do": "merge"})
    assert again.status_code == 405
    assert gitea_hooks(plain_forge, hook_receiver) == [
        {"action": "opened", "merged": False, "signed": True},
        {"action": "closed", "merged": True, "signed": True},
    ]


def test_a_reviewer_merging_or_closing_in_the_web_ui_sends_gitea_s_event(
    plain_forge, tea, tmp_path, hook_receiver
):
    hooked(tea, hook_receiver)
    plain_forge.add_user("rita")
    plain_forge.grant(REPO, "rita", "write")
    for n, branch in enumerate(("one", "two"), start=1):
        push_branch(plain_forge, tmp_path / "work", branch, {f"{branch}.yaml": "x: 1\n"})
        body = {"head": branch, "base": "main", "title": branch}
        assert tea("POST", f"/repos/{REPO}/pulls", json=body).json()["number"] == n

    plain_forge.merge_as_reviewer(REPO, 1, "rita")
    plain_forge.close_as_reviewer(REPO, 2, "rita")

    assert gitea_hooks(plain_forge, hook_receiver)[2:] == [
        {"action": "closed", "merged": True, "signed": True},
        {"action": "closed", "merged": False, "signed": True},
    ]
    closed = tea("GET", f"/repos/{REPO}/pulls", params={"state": "closed"}).json()
    assert [(p["number"], p["merged"]) for p in closed] == [(2, False), (1, True)]
    assert tea("GET", f"/repos/{REPO}/pulls").json() == []  # open is the default
    assert tea("GET", f"/repos/{REPO}/pulls/1").json()["merged_by"]["login"] == "rita"


def test_closing_and_reopening_through_the_api_and_a_duplicate_refused(plain_forge, tea, tmp_path):
    push_branch(plain_forge, tmp_path / "work", "topic", {"t.yaml": "t: 1\n"})
    body = {"head": "topic", "base": "main", "title": "Topic"}
    assert tea("POST", f"/repos/{REPO}/pulls", json=body).status_code == 201
    duplicate = tea("POST", f"/repos/{REPO}/pulls", json=body)
    assert duplicate.status_code == 409
    assert duplicate.json()["message"].startswith("pull request already exists")

    closed = tea("PATCH", f"/repos/{REPO}/pulls/1", json={"state": "closed"})
    assert (closed.status_code, closed.json()["state"]) == (201, "closed")
    assert tea("POST", f"/repos/{REPO}/pulls/1/merge", json={"Do": "merge"}).status_code == 405
    reopened = tea("PATCH", f"/repos/{REPO}/pulls/1", json={"state": "open", "title": "T"})
    assert (reopened.json()["state"], reopened.json()["title"]) == ("open", "T")


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ({"head": "topic", "base": "main"}, "[title]: Required"),
        ({"head": "topic", "base": "main", "title": "x", "draft": True}, "[draft]"),
        ({"head": "topic", "base": "main", "title": 7}, "[title]"),
    ],
)
def test_parameters_gitea_does_not_take_are_refused_with_its_422(tea, body, said):
    refused = tea("POST", f"/repos/{REPO}/pulls", json=body)
    assert refused.status_code == 422
    assert said in refused.json()["message"] and refused.json()["url"]


def test_a_repository_the_user_cannot_see_is_hidden_and_a_bad_token_refused(plain_forge, tea):
    stranger = plain_forge.add_user("stranger")
    as_stranger = Gitea(tea.root, stranger)
    assert as_stranger("GET", f"/repos/{REPO}").status_code == 404
    as_stranger.session.close()
    plain_forge.grant(REPO, "stranger", "read")
    reader = Gitea(tea.root, stranger)
    assert reader("GET", f"/repos/{REPO}").json()["permissions"]["push"] is False
    reader.session.close()
    anonymous = requests.get(tea.root + f"/repos/{REPO}", timeout=10)
    assert anonymous.status_code == 401
    bearer = requests.get(
        tea.root + "/user", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10
    )
    assert bearer.json()["login"] == plain_forge.user


def test_a_body_that_is_not_a_json_object_and_a_missing_pull_request_are_gitea_s_errors(tea):
    not_json = tea("POST", f"/repos/{REPO}/pulls", data=b"head=topic")
    assert not_json.status_code == 422 and not_json.json()["url"]
    assert tea("POST", f"/repos/{REPO}/pulls", json=["head"]).status_code == 422
    assert tea("GET", f"/repos/{REPO}/pulls/abc").status_code == 404
    assert tea("GET", f"/repos/{REPO}/pulls/9").json()["message"]
    unknown_state = tea("GET", f"/repos/{REPO}/pulls", params={"state": "merged"})
    assert unknown_state.status_code == 422
