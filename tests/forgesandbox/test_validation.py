"""Requests and answers are checked against GitHub's OpenAPI description: a request that
breaks it is refused as GitHub refuses it, an answer that breaks it is the stand-in's bug
and fails loudly."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from forgesandbox import ForgeSandbox, SpecMissing, render, spec
from forgesandbox.gitrepo import Repository
from forgesandbox.model import Forge, Repo
from forgesandbox.validation import ForgeRequest, ForgeResponse, Validator

from .conftest import call as send


def test_a_pull_request_without_head_is_refused_as_github_refuses_it(forge: ForgeSandbox) -> None:
    status, body = send(
        forge, "POST", "/repos/acme/gitops/pulls", b'{"base": "main", "title": "t"}'
    )

    assert status == 422
    assert body["message"] == 'Invalid request.\n\n"head" wasn\'t supplied.'
    refused = forge.requests()[-1]
    assert refused["status"] == 422
    assert "'head' is a required property" in refused["refused"]


def test_a_body_that_is_not_json_is_400_and_a_wrong_type_422(forge: ForgeSandbox) -> None:
    assert send(forge, "POST", "/repos/acme/gitops/pulls", b"{head")[1]["message"] == (
        "Problems parsing JSON"
    )
    status, body = send(forge, "PATCH", "/repos/acme/gitops/pulls/1", b'{"state": "merged"}')
    assert status == 422
    assert body["message"].startswith("Invalid request.\n\nFor 'properties/state', 'merged'")


@pytest.fixture(scope="module")
def validator() -> Validator:
    reason = spec.missing_reason()
    if reason:
        pytest.skip(reason)
    return Validator(spec.load_openapi(spec.spec_path()), spec.load_document(spec.spec_path()))


def pull_request_answer(**overrides: object) -> bytes:
    """A pull request as the stand-in renders one, without a repository behind it."""
    urls = render.Urls(api="http://f/api/v3", web="http://f", git="http://g")
    forge = Forge(Path("unused"))
    forge.add_user("acme")
    repo = Repo("acme", "gitops", 1, True, "main", Repository(Path("unused")))
    user = render.user(urls, forge.users["acme"])
    branch = {
        "label": "acme:x",
        "ref": "x",
        "sha": "0" * 40,
        "user": user,
        "repo": render.repository(urls, forge, repo, None),
    }
    body = {
        "url": "http://f/p/1", "id": 1, "node_id": "PR_1", "html_url": "http://f/p/1",
        "diff_url": "http://f/p/1.diff", "patch_url": "http://f/p/1.patch",
        "issue_url": "http://f/i/1", "commits_url": "http://f/p/1/commits",
        "review_comments_url": "http://f/p/1/comments", "review_comment_url": "http://f/c",
        "comments_url": "http://f/i/1/comments", "statuses_url": "http://f/s",
        "number": 1, "state": "open", "locked": False, "title": "t", "user": user, "body": None,
        "labels": [], "milestone": None, "created_at": "2026-01-01T00:00:00Z",
        "updated_at": "2026-01-01T00:00:00Z", "closed_at": None, "merged_at": None,
        "merge_commit_sha": None, "assignee": None, "head": branch, "base": branch,
        "_links": {k: {"href": "http://f"} for k in (
            "self", "html", "issue", "comments", "review_comments", "review_comment",
            "commits", "statuses")},
        "author_association": "OWNER", "auto_merge": None,
    }  # fmt: skip
    body.update(overrides)
    return json.dumps([body]).encode()


def test_the_response_validator_catches_a_pull_request_missing_a_required_field(
    validator: Validator,
) -> None:
    listing = ForgeRequest("GET", "/repos/acme/gitops/pulls", [], {}, None, "application/json")
    assert validator.check_response(listing, ForgeResponse(200, pull_request_answer())) is None

    wrong = json.loads(pull_request_answer())
    del wrong[0]["number"]
    problem = validator.check_response(listing, ForgeResponse(200, json.dumps(wrong).encode()))
    assert problem is not None
    assert "'number' is a required property" in problem
    mistyped = pull_request_answer(state=3)
    assert "0/state: 3 is not of type 'string'" in str(
        validator.check_response(listing, ForgeResponse(200, mistyped))
    )
    # An undocumented status must still carry GitHub's error shape.
    assert validator.check_response(listing, ForgeResponse(401, b'{"message": 1}'))


def test_a_wrong_answer_is_a_500_naming_the_problem_and_recorded(
    forge: ForgeSandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    rendered = render.private_user

    def without_login(*args: object) -> dict:
        body = rendered(*args)  # type: ignore[arg-type]
        del body["login"]
        return body

    monkeypatch.setattr(render, "private_user", without_login)
    status, body = send(forge, "GET", "/user", b"")

    assert status == 500
    assert "answered against GitHub's description" in body["message"]
    assert [r["path"] for r in forge.invalid_responses] == ["/user"]
    with pytest.raises(AssertionError, match="'login' is a required property"):
        forge.assert_valid_responses()
    forge.invalid_responses.clear()  # the fixture's own check is for unplanned ones


def test_a_crash_in_the_stand_in_is_a_500_and_recorded(
    forge: ForgeSandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object) -> dict:
        raise RuntimeError("a bug")

    monkeypatch.setattr(render, "private_user", broken)
    assert send(forge, "GET", "/user")[0] == 500
    assert forge.invalid_responses[0]["error"] == "RuntimeError: a bug"
    forge.invalid_responses.clear()


def test_without_the_description_a_validating_forge_says_how_to_get_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(spec.SPEC_VARIABLE, str(tmp_path / "absent.json"))
    with pytest.raises(SpecMissing, match="run `make github-openapi`"):
        ForgeSandbox(tmp_path)
    ForgeSandbox(tmp_path, validate=False)  # a forge that does not validate needs none


def test_the_description_is_loaded_once_per_process(validator: Validator) -> None:
    started = time.perf_counter()
    assert spec.load_openapi(spec.spec_path()) is validator.openapi
    assert time.perf_counter() - started < 0.01
