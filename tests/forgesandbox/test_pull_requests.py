"""PyGithub drives the forge stand-in the whole way: a branch pushed with git over HTTP, a
pull request opened, listed, announced to a webhook, merged (a real merge commit on the base
branch) or closed; the refusals GitHub makes, as GitHub makes them."""

from __future__ import annotations

import hashlib
import hmac
from pathlib import Path

import pytest
from github import Github, GithubException

from forgesandbox import ForgeSandbox
from tests.support.forges import github_client
from tests.support.gitserver import commits_on, files_on

from .conftest import HookReceiver, Received, push_branch

SECRET = "hook-secret"


def verified(delivery: Received) -> dict:
    """The payload, after checking its signature as a receiver must."""
    expected = "sha256=" + hmac.new(SECRET.encode(), delivery.body, hashlib.sha256).hexdigest()
    assert hmac.compare_digest(delivery.headers["X-Hub-Signature-256"], expected)
    assert delivery.headers["X-GitHub-Delivery"]
    return delivery.payload


def add_hook(github: Github, repo: str, receiver: HookReceiver) -> None:
    github.get_repo(repo).create_hook(
        "web",
        {"url": receiver.url, "content_type": "json", "secret": SECRET},
        events=["pull_request"],
        active=True,
    )


def test_a_branch_pushed_over_http_becomes_a_merged_pull_request(
    forge: ForgeSandbox, github: Github, repo: str, hook_receiver: HookReceiver, tmp_path: Path
) -> None:
    add_hook(github, repo, hook_receiver)
    head = push_branch(forge, tmp_path / "work", "berth/payments-dev", {"apps/web.yaml": "a: 1\n"})

    gitops = github.get_repo(repo)
    assert gitops.clone_url == forge.clone_url(repo)
    opened = gitops.create_pull(
        base="main", head="berth/payments-dev", title="payments-dev", body="Berth asks"
    )
    assert (opened.number, opened.state, opened.head.sha) == (1, "open", head)
    listed = gitops.get_pulls(state="open", head="acme:berth/payments-dev")
    assert [pr.number for pr in listed] == [1]
    assert list(gitops.get_pulls(state="closed")) == []
    pr = gitops.get_pull(1)
    assert pr.mergeable is True
    assert pr.changed_files == 1

    result = pr.merge(sha=head)
    assert result.merged
    main = commits_on(forge.repo(repo).git.path)
    assert main[0]["sha"] == result.sha
    assert main[0]["subject"] == "Merge pull request #1 from acme/berth/payments-dev"
    assert forge.repo(repo).git.parents(result.sha)[1] == head
    assert files_on(forge.repo(repo).git.path)["apps/web.yaml"] == "a: 1\n"
    merged = gitops.get_pull(1)
    assert (merged.state, merged.merged, merged.merge_commit_sha) == ("closed", True, result.sha)
    assert merged.merged_by.login == forge.user

    forge.deliveries()  # wait for them
    ping, opened_event, closed_event = hook_receiver.received
    assert ping.event == "ping"
    assert opened_event.event == closed_event.event == "pull_request"
    assert verified(opened_event)["action"] == "opened"
    closed = verified(closed_event)
    assert closed["action"] == "closed"
    assert closed["pull_request"]["merged"] is True
    assert closed["pull_request"]["merge_commit_sha"] == result.sha
    (hook,) = gitops.get_hooks()
    assert (hook.last_response.code, hook.last_response.status) == (204, "active")


def test_a_pull_request_closed_without_merging_leaves_the_base_alone(
    forge: ForgeSandbox, github: Github, repo: str, hook_receiver: HookReceiver, tmp_path: Path
) -> None:
    add_hook(github, repo, hook_receiver)
    push_branch(forge, tmp_path / "work", "feature", {"a.txt": "a\n"})
    before = commits_on(forge.repo(repo).git.path)[0]["sha"]
    pr = github.get_repo(repo).create_pull(base="main", head="feature", title="t", body="")

    pr.edit(state="closed")

    closed = github.get_repo(repo).get_pull(pr.number)
    assert (closed.state, closed.merged, closed.merge_commit_sha) == ("closed", False, None)
    assert commits_on(forge.repo(repo).git.path)[0]["sha"] == before
    forge.deliveries()
    actions = [verified(r) for r in hook_receiver.events("pull_request")]
    assert [(a["action"], a["pull_request"]["merged"]) for a in actions] == [
        ("opened", False),
        ("closed", False),
    ]


def test_a_reviewer_merges_or_closes_in_the_web_ui(
    forge: ForgeSandbox, github: Github, repo: str, hook_receiver: HookReceiver, tmp_path: Path
) -> None:
    add_hook(github, repo, hook_receiver)
    forge.add_user("rita")
    forge.grant(repo, "rita", "maintain")
    push_branch(forge, tmp_path / "work", "one", {"one.txt": "1\n"})
    push_branch(forge, tmp_path / "work", "two", {"two.txt": "2\n"})
    gitops = github.get_repo(repo)
    first = gitops.create_pull(base="main", head="one", title="one", body="")
    second = gitops.create_pull(base="main", head="two", title="two", body="")

    sha = forge.merge_as_reviewer(repo, first.number, "rita")
    forge.close_as_reviewer(repo, second.number, "rita")

    assert gitops.get_pull(first.number).merged_by.login == "rita"
    assert commits_on(forge.repo(repo).git.path)[0]["sha"] == sha
    assert gitops.get_pull(second.number).state == "closed"
    assert not gitops.get_pull(second.number).merged
    forge.deliveries()
    closes = [verified(r) for r in hook_receiver.events("pull_request")][2:]
    assert [(c["number"], c["pull_request"]["merged"], c["sender"]["login"]) for c in closes] == [
        (first.number, True, "rita"),
        (second.number, False, "rita"),
    ]


def test_a_conflict_is_405_and_a_moved_head_is_409(
    forge: ForgeSandbox, github: Github, repo: str, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    push_branch(forge, work, "edit-readme", {"README.md": "# ours\n"})
    pr = github.get_repo(repo).create_pull(base="main", head="edit-readme", title="t", body="")
    old_head = pr.head.sha
    push_branch(forge, work, "edit-readme", {"notes.txt": "more\n"}, start="edit-readme")

    with pytest.raises(GithubException) as moved:
        pr.merge(sha=old_head)
    assert moved.value.status == 409
    assert (
        moved.value.data["message"] == "Head branch was modified. Review and try the merge again."
    )

    forge.push_commit(repo, "main", {"README.md": "# theirs\n"})  # the base moves underneath
    assert github.get_repo(repo).get_pull(pr.number).mergeable is False
    with pytest.raises(GithubException) as conflict:
        pr.merge()
    assert conflict.value.status == 405
    assert conflict.value.data["message"] == "Pull Request is not mergeable"
    assert github.get_repo(repo).get_pull(pr.number).state == "open"


def test_what_github_refuses_to_open(
    forge: ForgeSandbox, github: Github, repo: str, tmp_path: Path
) -> None:
    push_branch(forge, tmp_path / "work", "feature", {"a.txt": "a\n"})
    gitops = github.get_repo(repo)

    def refusal(**kwargs: str) -> dict:
        with pytest.raises(GithubException) as refused:
            gitops.create_pull(title="t", body="", **kwargs)
        assert refused.value.status == 422
        assert refused.value.data["message"] == "Validation Failed"
        return refused.value.data["errors"][0]

    assert refusal(base="main", head="main")["message"] == "No commits between main and main"
    assert refusal(base="main", head="nowhere") == {
        "resource": "PullRequest",
        "field": "head",
        "code": "invalid",
    }
    gitops.create_pull(base="main", head="feature", title="t", body="")
    assert refusal(base="main", head="feature")["message"] == (
        "A pull request already exists for acme:feature."
    )


def test_squash_merges_pages_and_a_merged_pull_request_stays_closed(
    forge: ForgeSandbox, github: Github, repo: str, tmp_path: Path
) -> None:
    push_branch(forge, tmp_path / "work", "one", {"one.txt": "1\n"})
    push_branch(forge, tmp_path / "work", "two", {"two.txt": "2\n"})
    gitops = github.get_repo(repo)
    first = gitops.create_pull(base="main", head="one", title="One", body="")
    gitops.create_pull(base="main", head="two", title="Two", body="")

    squashed = first.merge(merge_method="squash")
    assert forge.repo(repo).git.parents(squashed.sha) == [first.base.sha]
    assert commits_on(forge.repo(repo).git.path)[0]["subject"] == "One (#1)"
    with pytest.raises(GithubException) as reopen:
        first.edit(state="open")
    assert reopen.value.status == 422

    one_a_page = github_client(forge, forge.token, per_page=1)
    listed = one_a_page.get_repo(repo).get_pulls(state="all")
    assert [pr.number for pr in listed] == [2, 1]  # newest first, over two pages
    assert [r["query"].get("page") for r in forge.requests() if r["path"].endswith("/pulls")][
        -2:
    ] == [None, "2"]
