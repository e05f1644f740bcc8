"""Fixtures: a forge stand-in over a fresh directory of bare repositories, the project's git
server over the same directory (pushes there are what the forge sees), PyGithub pointed at
the forge, and a webhook receiver. Every test's forge must have answered only what GitHub's
description allows: the fixture checks it at the end."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import requests
from github import Github

from forgesandbox import ForgeSandbox
from forgesandbox.spec import missing_reason
from portal.gitserver import GitHttpServer
from tests.support.forges import forge_over_git, github_client
from tests.support.gitserver import git

TOKEN = "ghp_forgesandboxtesttoken000000000000"
REPO = "acme/gitops"


@pytest.fixture(scope="session")
def github_openapi() -> None:
    """GitHub's description must be there for a validating forge; skip, saying how to get it."""
    reason = missing_reason()
    if reason:
        pytest.skip(reason)


@pytest.fixture
def forge(tmp_path: Path, github_openapi: None) -> Iterator[ForgeSandbox]:
    root = tmp_path / "forge"
    root.mkdir()
    # The git server wants the forge's token as an HTTP Basic password, as GitHub does.
    with (
        GitHttpServer(root, token=TOKEN) as git_server,
        ForgeSandbox(root, git_url=git_server.base_url, token=TOKEN) as running,
    ):
        yield running
        running.assert_valid_responses()


@pytest.fixture
def plain_forge(tmp_path: Path) -> Iterator[ForgeSandbox]:
    """The forge for its GitLab and Gitea routes (no OpenAPI description needed), with
    acme/gitops, which the forge's user administers (on GitLab, a Maintainer)."""
    with forge_over_git(tmp_path, token=TOKEN, repo=REPO, validate=False) as running:
        yield running


@pytest.fixture
def github(forge: ForgeSandbox) -> Iterator[Github]:
    client = github_client(forge, forge.token)
    yield client
    client.close()


@pytest.fixture
def repo(forge: ForgeSandbox) -> str:
    """acme/gitops with a README on main; the forge's user is its admin."""
    forge.create_repo(REPO)
    forge.grant(REPO, forge.user, "admin")
    return REPO


def call(
    forge: ForgeSandbox,
    method: str,
    path: str,
    body: bytes = b"",
    authorization: str | None = "forge's",
) -> tuple[int, dict]:
    """A raw request to the API (status, JSON body), with the forge's token unless told."""
    if authorization == "forge's":
        authorization = f"token {forge.token}"
    headers = {"Content-Type": "application/json"}
    if authorization:
        headers["Authorization"] = authorization
    answer = requests.request(method, forge.api_url + path, data=body, headers=headers, timeout=30)
    return answer.status_code, answer.json()


def push_branch(
    forge: ForgeSandbox, work: Path, branch: str, files: dict[str, str], *, start: str = "main"
) -> str:
    """Clone over HTTP (once), commit ``files`` on ``branch`` (from ``start``) and push it,
    as Berth's git client would; returns the pushed commit."""
    auth = base64.b64encode(f"x-access-token:{forge.token}".encode()).decode()
    header = ["-c", f"http.extraHeader=Authorization: Basic {auth}"]
    if not (work / ".git").exists():
        git(*header, "clone", "--quiet", forge.clone_url(REPO), str(work))
    git("checkout", "--quiet", "-B", branch, f"origin/{start}", cwd=work)
    for name, content in files.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(content)
        git("add", name, cwd=work)
    git("commit", "--quiet", "-m", f"Change {', '.join(files)}", cwd=work)
    git(*header, "push", "--quiet", "--force", "origin", branch, cwd=work)
    git(*header, "fetch", "--quiet", "origin", cwd=work)
    return git("rev-parse", "HEAD", cwd=work).strip()


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes

    @property
    def event(self) -> str:
        return self.headers["X-GitHub-Event"]

    @property
    def payload(self) -> dict:
        return json.loads(self.body)


@dataclass
class HookReceiver:
    url: str
    received: list[Received] = field(default_factory=list)

    def events(self, name: str) -> list[Received]:
        return [r for r in self.received if r.event == name]


@pytest.fixture
def hook_receiver() -> Iterator[HookReceiver]:
    """An HTTP endpoint on loopback that keeps every POST it gets."""
    received: list[Received] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            received.append(Received(dict(self.headers.items()), body))
            self.send_response(204)
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield HookReceiver(f"http://127.0.0.1:{server.server_address[1]}/hook", received)
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
