"""The test controls over HTTP (``/_sandbox/``): what a test in another process does."""

from __future__ import annotations

import json

import requests

from forgesandbox import ForgeSandbox


def control(forge: ForgeSandbox, method: str, path: str, body: dict | None = None, token=None):
    answer = requests.request(
        method,
        f"{forge.url}/_sandbox{path}",
        data=json.dumps(body) if body is not None else None,
        headers={"Authorization": f"token {token or forge.token}"},
        timeout=30,
    )
    return answer.status_code, answer.json()


def test_a_reviewer_merges_over_http_and_the_request_log_shows_the_calls(
    forge: ForgeSandbox,
) -> None:
    assert control(forge, "POST", "/repos", {"full_name": "acme/gitops"})[0] == 201
    assert (
        control(forge, "PUT", f"/repos/acme/gitops/collaborators/{forge.user}", {"role": "write"})[
            0
        ]
        == 200
    )
    status, pushed = control(
        forge, "POST", "/repos/acme/gitops/commits", {"branch": "feature", "files": {"a": "a\n"}}
    )
    assert status == 201
    opened = requests.post(
        f"{forge.api_url}/repos/acme/gitops/pulls",
        json={"head": "feature", "base": "main", "title": "t"},
        headers={"Authorization": f"token {forge.token}"},
        timeout=30,
    ).json()
    assert opened["head"]["sha"] == pushed["sha"]

    assert control(forge, "POST", "/repos/acme/gitops/pulls/1/merge", {})[1]["merged"] is True
    assert forge.repo("acme/gitops").pulls[1].merged

    status, log = control(forge, "GET", "/requests")
    assert [(r["method"], r["path"], r["status"]) for r in log] == [
        ("POST", "/repos/acme/gitops/pulls", 201)
    ]
    assert control(forge, "GET", "/requests", token="someone else's")[0] == 401
    assert control(forge, "GET", "/invalid-responses") == (200, [])
