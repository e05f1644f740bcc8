"""The forge's review pages, as a person opens them from the link Berth shows (the pull
request's `html_url`), with no token: what the pull request is and changes (from git), and
Merge and Close buttons that do what the API's merge and close do, webhooks included."""

from __future__ import annotations

import hashlib
import hmac
import re

import pytest
import requests

from forgesandbox import ForgeSandbox
from tests.support.gitserver import commits_on, files_on

from .conftest import REPO, HookReceiver

SECRET = "review-hook-secret"


def open_pull(forge: ForgeSandbox, branch: str, files: dict[str, str], **fields: str) -> dict:
    """A branch pushed with ``files`` and a pull request for it, opened over the API."""
    forge.push_commit(REPO, branch, files, message=f"Change {', '.join(files)}")
    answer = requests.post(
        f"{forge.api_url}/repos/{REPO}/pulls",
        json={"head": branch, "base": "main", "title": "payments-web-prod", **fields},
        headers={"Authorization": f"token {forge.token}"},
        timeout=30,
    )
    assert answer.status_code == 201, answer.text
    return answer.json()


def hooked(forge: ForgeSandbox, receiver: HookReceiver) -> None:
    answer = requests.post(
        f"{forge.api_url}/repos/{REPO}/hooks",
        json={
            "name": "web",
            "config": {"url": receiver.url, "content_type": "json", "secret": SECRET},
            "events": ["pull_request"],
        },
        headers={"Authorization": f"token {forge.token}"},
        timeout=30,
    )
    assert answer.status_code == 201, answer.text


def form_of(page: str) -> dict[str, str]:
    """The hidden fields of the page's Merge button."""
    return dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)">', page)[:2])


def press(forge: ForgeSandbox, pull: dict, button: str, form: dict[str, str], **headers: str):
    return requests.post(
        f"{pull['html_url']}/{button}",
        data=form,
        headers=headers,
        allow_redirects=False,
        timeout=30,
    )


def closed_events(forge: ForgeSandbox, receiver: HookReceiver) -> list[dict]:
    forge.deliveries()  # wait for them
    events = []
    for received in receiver.events("pull_request"):
        expected = hmac.new(SECRET.encode(), received.body, hashlib.sha256).hexdigest()
        assert received.headers["X-Hub-Signature-256"] == f"sha256={expected}"
        if received.payload["action"] == "closed":
            events.append(received.payload)
    return events


def test_the_pull_requests_link_shows_it_without_a_token(plain_forge: ForgeSandbox) -> None:
    pull = open_pull(
        plain_forge,
        "berth/request-7",
        {"apps/web.yaml": "replicas: 2\n", "README.md": "# gitops\nmoved\n"},
        body="Request #7 asks for payments-web-prod.",
    )

    page = requests.get(pull["html_url"], timeout=30)

    assert pull["html_url"] == f"{plain_forge.url}/{REPO}/pull/1"
    assert page.status_code == 200
    assert page.headers["Content-Type"] == "text/html; charset=utf-8"
    assert "script-src" not in page.headers["Content-Security-Policy"]  # none runs
    assert "<h1>payments-web-prod <small>#1</small></h1>" in page.text
    assert "Request #7 asks for payments-web-prod." in page.text
    assert '<span class="state open">Open</span>' in page.text
    assert "<code>berth/request-7</code>" in page.text and "<code>main</code>" in page.text
    # The files and the unified diff, from git.
    assert "Files changed (2)" in page.text
    assert '<a href="#file-1">README.md</a> <span class="add">+1</span>' in page.text
    assert '<a href="#file-2">apps/web.yaml</a>' in page.text
    assert '<span class="add">+replicas: 2\n</span>' in page.text
    assert '<span class="meta">+++ b/apps/web.yaml\n</span>' in page.text
    assert "<button>Merge pull request</button>" in page.text
    assert "<button>Close pull request</button>" in page.text
    assert form_of(page.text)["sha"] == pull["head"]["sha"]
    diff = requests.get(pull["diff_url"], timeout=30)
    assert diff.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert diff.text.startswith("diff --git a/README.md b/README.md\n")
    assert "+replicas: 2\n" in diff.text


def test_merge_merges_in_git_fires_the_webhook_and_shows_the_merge(
    plain_forge: ForgeSandbox, hook_receiver: HookReceiver
) -> None:
    hooked(plain_forge, hook_receiver)
    base = plain_forge.repo(REPO).git.branch_sha("main")
    pull = open_pull(plain_forge, "berth/request-8", {"apps/web.yaml": "replicas: 3\n"})
    form = form_of(requests.get(pull["html_url"], timeout=30).text)

    pressed = press(plain_forge, pull, "merge", form)

    assert pressed.status_code == 303
    assert pressed.headers["Location"] == f"/{REPO}/pull/1"
    bare = plain_forge.root / f"{REPO}.git"
    merge = commits_on(bare)[0]
    assert merge["subject"] == "Merge pull request #1 from acme/berth/request-8"
    assert plain_forge.repo(REPO).git.parents(merge["sha"]) == [base, pull["head"]["sha"]]
    assert files_on(bare)["apps/web.yaml"] == "replicas: 3\n"
    (event,) = closed_events(plain_forge, hook_receiver)
    assert event["pull_request"]["merged"] is True
    assert event["pull_request"]["merge_commit_sha"] == merge["sha"]
    assert event["sender"]["login"] == "acme"
    api = requests.get(
        pull["url"], headers={"Authorization": f"token {plain_forge.token}"}, timeout=30
    ).json()
    assert (api["state"], api["merged"], api["merged_by"]["login"]) == ("closed", True, "acme")
    page = requests.get(pull["html_url"], timeout=30).text
    assert '<span class="state merged">Merged</span>' in page
    assert f"<code>{merge['sha']}</code>" in page
    assert "<button>" not in page
    # Pressed again (a double click): nothing more happens.
    assert press(plain_forge, pull, "merge", form).status_code == 303
    assert len(closed_events(plain_forge, hook_receiver)) == 1


def test_close_closes_unmerged_and_fires_the_webhook(
    plain_forge: ForgeSandbox, hook_receiver: HookReceiver
) -> None:
    hooked(plain_forge, hook_receiver)
    base = plain_forge.repo(REPO).git.branch_sha("main")
    pull = open_pull(plain_forge, "berth/request-9", {"apps/web.yaml": "replicas: 4\n"})
    form = form_of(requests.get(pull["html_url"], timeout=30).text)

    assert press(plain_forge, pull, "close", {"token": form["token"]}).status_code == 303

    assert plain_forge.repo(REPO).git.branch_sha("main") == base
    (event,) = closed_events(plain_forge, hook_receiver)
    assert event["pull_request"]["merged"] is False
    page = requests.get(pull["html_url"], timeout=30).text
    assert '<span class="state closed">Closed</span>' in page
    assert "Closed by acme" in page and "not merged" in page
    assert "<button>" not in page
    # The diff stays what it was.
    assert '<span class="add">+replicas: 4\n</span>' in page


def test_a_merge_of_a_head_that_moved_since_the_page_is_refused(plain_forge: ForgeSandbox) -> None:
    pull = open_pull(plain_forge, "berth/request-10", {"apps/web.yaml": "replicas: 5\n"})
    form = form_of(requests.get(pull["html_url"], timeout=30).text)
    plain_forge.push_commit(REPO, "berth/request-10", {"apps/web.yaml": "replicas: 50\n"})

    pressed = press(plain_forge, pull, "merge", form)

    assert pressed.status_code == 409
    assert "Head branch was modified" in pressed.text
    assert '<span class="add">+replicas: 50\n</span>' in pressed.text  # what is there now
    assert plain_forge.repo(REPO).pulls[1].state == "open"


def test_html_in_a_title_or_body_shows_as_text(plain_forge: ForgeSandbox) -> None:
    pull = open_pull(
        plain_forge,
        "berth/<b>",
        {"<i>.yaml": "<script>alert(2)</script>\n"},
        title="<script>alert(1)</script>",
        body='"><img src=x onerror=alert(3)>',
    )

    page = requests.get(pull["html_url"], timeout=30).text
    listed = requests.get(f"{plain_forge.url}/{REPO}/pulls", timeout=30).text

    for shown in (page, listed):
        assert "<script>" not in shown and "<b>" not in shown
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in shown
    assert "<img" not in page and "&quot;&gt;&lt;img src=x onerror=alert(3)&gt;" in page
    assert "&lt;i&gt;.yaml" in page and "+&lt;script&gt;alert(2)&lt;/script&gt;" in page


@pytest.mark.parametrize(
    "path",
    [f"/{REPO}/pull/9", f"/{REPO}/pull/9.diff", "/acme/nothing/pull/1", "/acme/nothing/pulls"],
)
def test_an_unknown_pull_request_or_repository_is_404(plain_forge: ForgeSandbox, path) -> None:
    open_pull(plain_forge, "berth/request-11", {"a.yaml": "a: 1\n"})

    answer = requests.get(plain_forge.url + path, timeout=30)

    assert answer.status_code == 404
    assert answer.headers["Content-Type"] == "text/html; charset=utf-8"
    if "/pull/" in path and not path.endswith(".diff"):
        assert requests.post(f"{plain_forge.url}{path}/merge", timeout=30).status_code == 404


def test_a_button_pressed_elsewhere_than_on_the_forges_page_changes_nothing(
    plain_forge: ForgeSandbox, hook_receiver: HookReceiver
) -> None:
    hooked(plain_forge, hook_receiver)
    pull = open_pull(plain_forge, "berth/request-12", {"a.yaml": "a: 1\n"})
    form = form_of(requests.get(pull["html_url"], timeout=30).text)
    host = f"127.0.0.1:{plain_forge.port}"

    no_token = press(plain_forge, pull, "merge", {"sha": form["sha"]})
    wrong_token = press(plain_forge, pull, "close", {**form, "token": "guessed"})
    other_site = press(plain_forge, pull, "merge", form, Origin="https://evil.example")
    rebound = press(plain_forge, pull, "merge", form, Host=f"evil.example:{plain_forge.port}")
    fetched = requests.get(pull["html_url"] + "/merge", timeout=30)

    assert [a.status_code for a in (no_token, wrong_token, other_site, rebound)] == [403] * 4
    assert "not one of this forge&#x27;s pages" in no_token.text
    assert "https://evil.example" in other_site.text
    assert fetched.status_code == 405 and fetched.headers["Allow"] == "POST"
    assert plain_forge.repo(REPO).pulls[1].state == "open"
    assert closed_events(plain_forge, hook_receiver) == []
    # Its own origin and host, as a browser sends them from the page, are taken.
    ok = press(plain_forge, pull, "merge", form, Origin=f"http://{host}", Host=host)
    assert ok.status_code == 303


def test_the_repositorys_pull_requests_are_listed_newest_first(plain_forge: ForgeSandbox) -> None:
    first = open_pull(plain_forge, "berth/request-13", {"a.yaml": "a: 1\n"}, title="first")
    open_pull(plain_forge, "berth/request-14", {"b.yaml": "b: 1\n"}, title="second")
    plain_forge.close_as_reviewer(REPO, first["number"])

    listed = requests.get(f"{plain_forge.url}/{REPO}/pulls", timeout=30).text
    closed = requests.get(f"{plain_forge.url}/{REPO}/pulls?state=closed", timeout=30).text
    root = requests.get(f"{plain_forge.url}/{REPO}", allow_redirects=False, timeout=30)

    assert re.findall(r'<a href="/acme/gitops/pull/(\d)">(\w+)</a>', listed) == [
        ("2", "second"),
        ("1", "first"),
    ]
    assert "<td>closed</td>" in listed and "<td>open</td>" in listed
    assert re.findall(r'<a href="/acme/gitops/pull/(\d)">', closed) == ["1"]
    assert root.status_code == 302 and root.headers["Location"] == f"/{REPO}/pulls"
