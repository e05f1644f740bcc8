"""A repository's webhooks after they are made: read one, change it (GitHub's PATCH, which
replaces the config and drops a secret not given again), remove it; admins only, every
answer checked against GitHub's description by the fixture."""

from __future__ import annotations

import hashlib
import hmac

from github import Github, GithubException

from forgesandbox import ForgeSandbox
from tests.support.forges import github_client

from .conftest import HookReceiver, call

SECRET = "first-secret"


def signed_with(secret: str, headers: dict[str, str], body: bytes) -> bool:
    expected = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return headers.get("X-Hub-Signature-256") == expected


def test_a_hook_moved_to_another_url_and_secret_delivers_there_signed_with_it(
    forge: ForgeSandbox, github: Github, repo: str, hook_receiver: HookReceiver
) -> None:
    gitops = github.get_repo(repo)
    made = gitops.create_hook(
        "web",
        {"url": "http://127.0.0.1:9/gone", "content_type": "json", "secret": SECRET},
        events=["push"],
        active=False,
    )

    made.edit(
        "web",
        {"url": hook_receiver.url, "content_type": "json", "secret": "second-secret"},
        events=["pull_request"],
        active=True,
    )

    (listed,) = gitops.get_hooks()
    assert (listed.id, listed.config["url"], listed.events) == (
        made.id,
        hook_receiver.url,
        ["pull_request"],
    )
    assert listed.active is True and listed.config["secret"] == "********"
    assert gitops.get_hook(made.id).config["url"] == hook_receiver.url
    forge.push_commit(repo, "feature", {"a.yaml": "a: 1\n"})
    gitops.create_pull(base="main", head="feature", title="t")
    (opened,) = forge.deliveries("pull_request")
    assert opened.url == hook_receiver.url and opened.status == 204
    assert signed_with("second-secret", opened.headers, opened.body)


def test_a_config_without_its_secret_drops_it_and_events_can_be_added_and_removed(
    forge: ForgeSandbox, github: Github, repo: str
) -> None:
    hook = github.get_repo(repo).create_hook(
        "web", {"url": "http://127.0.0.1:9/h", "secret": SECRET}, events=["push"]
    )

    hook.edit("web", {"url": "http://127.0.0.1:9/h2"}, add_events=["pull_request", "push"])
    assert "secret" not in hook.config and hook.events == ["push", "pull_request"]
    hook.edit("web", hook.config, remove_events=["push"])
    assert hook.events == ["pull_request"]
    assert forge.repo(repo).hooks[hook.id].secret is None


def test_a_hook_is_removed_and_others_than_admins_see_none(
    forge: ForgeSandbox, github: Github, repo: str
) -> None:
    hook = github.get_repo(repo).create_hook("web", {"url": "http://127.0.0.1:9/h"})
    token = forge.add_user("wendy")
    forge.grant(repo, "wendy", "write")
    writer = github_client(forge, token)

    try:
        writer.get_repo(repo).get_hook(hook.id)
    except GithubException as error:
        assert error.status == 404
    else:
        raise AssertionError("a writer read an admin's hook")
    finally:
        writer.close()
    hook.delete()

    assert list(github.get_repo(repo).get_hooks()) == []
    status, body = call(forge, "PATCH", f"/repos/{repo}/hooks/{hook.id}", b'{"active": false}')
    assert (status, body["message"]) == (404, "Not Found")
