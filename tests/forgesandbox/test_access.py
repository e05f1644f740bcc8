"""Who may see and do what: tokens (401), hidden repositories (404), the permission endpoint
Berth asks at onboarding whether its credential can open pull requests."""

from __future__ import annotations

import pytest
from github import Github, GithubException

from forgesandbox import ForgeSandbox
from tests.support.forges import github_client

from .conftest import call


def raw(forge: ForgeSandbox, path: str, authorization: str | None = None) -> tuple[int, dict]:
    return call(forge, "GET", path, authorization=authorization)


def test_no_token_or_an_unknown_one_is_401_and_either_scheme_works(forge: ForgeSandbox) -> None:
    assert raw(forge, "/user") == (
        401,
        {
            "message": "Requires authentication",
            "documentation_url": "https://docs.github.com/rest",
            "status": "401",
        },
    )
    assert raw(forge, "/user", "token nope")[1]["message"] == "Bad credentials"
    assert raw(forge, "/user", f"token {forge.token}")[1]["login"] == forge.user
    assert raw(forge, "/user", f"Bearer {forge.token}")[1]["login"] == forge.user


def test_the_permission_endpoint_says_what_each_user_may_do(
    forge: ForgeSandbox, github: Github, repo: str
) -> None:
    for login, role in (("wanda", "write"), ("mona", "maintain"), ("rhea", "read")):
        forge.add_user(login)
        forge.grant(repo, login, role)
    forge.add_user("nadia")
    gitops = github.get_repo(repo)

    assert gitops.get_collaborator_permission(forge.user) == "admin"
    assert gitops.get_collaborator_permission("wanda") == "write"
    assert gitops.get_collaborator_permission("mona") == "write"  # maintain, in the old words
    assert gitops.get_collaborator_role_name("mona") == "maintain"
    assert gitops.get_collaborator_permission("rhea") == "read"
    assert gitops.get_collaborator_permission("nadia") == "none"
    assert gitops.permissions.push and gitops.permissions.admin


def test_a_private_repository_is_404_to_outsiders_and_readers_cannot_merge(
    forge: ForgeSandbox, repo: str
) -> None:
    outsider = forge.add_user("otto")
    reader = forge.add_user("rhea")
    forge.grant(repo, "rhea", "read")
    forge.create_repo("acme/public", private=False)

    as_outsider = github_client(forge, outsider)
    with pytest.raises(GithubException) as hidden:
        as_outsider.get_repo(repo)
    assert (hidden.value.status, hidden.value.data["message"]) == (404, "Not Found")
    assert as_outsider.get_repo("acme/public").permissions.pull
    assert raw(forge, f"/repos/{repo}/hooks", f"token {reader}")[0] == 404  # admins only

    forge.push_commit(repo, "feature", {"a.txt": "a\n"})
    as_reader = github_client(forge, reader)
    pr = as_reader.get_repo(repo).create_pull(base="main", head="feature", title="t", body="")
    with pytest.raises(GithubException) as refused:
        pr.merge()
    assert refused.value.status == 403
    assert not as_reader.get_repo(repo).permissions.push
