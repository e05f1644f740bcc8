"""A Gitea that is busy (502, 503) or rate-limiting (429) is not a Gitea that forgot the pull
request: the request keeps waiting for its merge and is asked about again, where a 404
sends it back to its requester. The busy forge is a plain HTTP server answering Gitea's
error body, put in front of the tenant for as long as the test says."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from provisioning.gitops.forge import Forge, ForgeError, read_pull
from provisioning.reconcile.pull_requests import poll_pull_requests
from tenants.choices import PullRequestState, RequestState
from tenants.models import PullRequest

from .conftest import REPO, TOKEN, opened, world_on


@pytest.fixture
def gitea_world(db, sandbox, plain_forge, settings):
    return world_on(
        sandbox, plain_forge, settings, kind="gitea", api_url=f"{plain_forge.url}/gitea"
    )


@contextmanager
def busy_gitea(status: int) -> Iterator[tuple[str, list[str]]]:
    """A server answering every call with `status` and Gitea's JSON error; yields its URL
    and the paths it was asked for."""
    asked: list[str] = []

    class Busy(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            asked.append(self.path)
            body = json.dumps({"message": "try again later", "url": "https://gitea.io"})
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            if status == 429:
                self.send_header("Retry-After", "60")
            self.end_headers()
            self.wfile.write(body.encode())

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Busy)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", asked
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("status", [502, 503, 429])
def test_a_busy_gitea_is_a_transient_error_that_hides_the_token(status):
    with busy_gitea(status) as (url, asked), pytest.raises(ForgeError) as busy:
        read_pull(Forge(api_url=url, repository=REPO, token=TOKEN, kind="gitea"), 7)
    assert (busy.value.status, busy.value.transient) == (status, True)
    assert asked == [f"/api/v1/repos/{REPO}/pulls/7"]
    assert TOKEN not in busy.value.message


@pytest.mark.parametrize("status", [503, 429])
def test_a_request_waits_through_a_busy_gitea_and_goes_on_once_it_answers(gitea_world, status):
    waiting = opened(gitea_world)
    tenant = gitea_world["tenant"]
    answering = tenant.forge_api_url
    with busy_gitea(status) as (url, asked):
        tenant.forge_api_url = url
        tenant.save(update_fields=["forge_api_url"])
        polled = poll_pull_requests()
    assert asked, "the forge was asked"
    assert polled[waiting.pk].startswith("not asked:"), polled
    waiting.refresh_from_db()
    assert waiting.state == RequestState.AWAITING_MERGE, waiting.status_message
    assert PullRequest.objects.get(request=waiting).state == PullRequestState.OPEN

    tenant.forge_api_url = answering
    tenant.save(update_fields=["forge_api_url"])
    gitea_world["forge"].merge_as_reviewer(REPO, 1, "rita")
    assert poll_pull_requests() == {waiting.pk: "merged"}
