"""The test controls over HTTP, under ``/_sandbox/`` (the forge's own token only): what a
test in another process, or a person with curl, does through ``ForgeSandbox``'s methods.

    POST /_sandbox/users                            {"login", "token"?} -> {"token"}
    POST /_sandbox/repos                            {"full_name", "private"?, "files"?}
    PUT  /_sandbox/repos/{o}/{r}/collaborators/{u}  {"role"}
    POST /_sandbox/repos/{o}/{r}/commits            {"branch", "files", "message"?}
    POST /_sandbox/repos/{o}/{r}/pulls/{n}/merge    {"reviewer"?, "merge_method"?}
    POST /_sandbox/repos/{o}/{r}/pulls/{n}/close    {"reviewer"?}
    GET  /_sandbox/requests, GET /_sandbox/deliveries, GET /_sandbox/invalid-responses
"""

from __future__ import annotations

import json
import re
from typing import Any, Protocol

from .model import ForgeError, Pull, Repo
from .webhooks import Delivery


class ForgeSandbox(Protocol):
    """What the controls use of ``server.ForgeSandbox`` (which serves them: a Protocol, so
    the two modules do not import each other)."""

    invalid_responses: list[dict]

    def requests(self) -> list[dict]: ...
    def deliveries(self, event: str | None = None) -> list[Delivery]: ...
    def add_user(self, login: str, token: str | None = None) -> str: ...
    def create_repo(
        self, full_name: str, *, private: bool = ..., files: dict[str, str] | None = ...
    ) -> Repo: ...
    def clone_url(self, full_name: str) -> str: ...
    def grant(self, full_name: str, login: str, role: str) -> None: ...
    def push_commit(
        self, full_name: str, branch: str, files: dict[str, str], message: str = ...
    ) -> str: ...
    def merge_as_reviewer(
        self, full_name: str, number: int, reviewer: str | None = ..., method: str = ...
    ) -> str: ...
    def close_as_reviewer(
        self, full_name: str, number: int, reviewer: str | None = ...
    ) -> Pull: ...


_REPO = r"/repos/(?P<full>[^/]+/[^/]+)"


def control(sandbox: ForgeSandbox, method: str, path: str, raw: bytes) -> tuple[int, Any]:
    try:
        body = json.loads(raw) if raw else {}
    except ValueError as error:
        return 400, {"message": f"not JSON: {error}"}
    try:
        return _dispatch(sandbox, method, path, body)
    except ForgeError as error:
        return error.status, {"message": error.message}
    except (KeyError, TypeError, ValueError) as error:
        return 400, {"message": f"bad control request: {error!r}"}


def _dispatch(sandbox: ForgeSandbox, method: str, path: str, body: dict) -> tuple[int, Any]:
    if (method, path) == ("GET", "/requests"):
        return 200, sandbox.requests()
    if (method, path) == ("GET", "/deliveries"):
        return 200, [d.summary() for d in sandbox.deliveries()]
    if (method, path) == ("GET", "/invalid-responses"):
        return 200, list(sandbox.invalid_responses)
    if (method, path) == ("POST", "/users"):
        return 201, {"token": sandbox.add_user(body["login"], body.get("token"))}
    if (method, path) == ("POST", "/repos"):
        repo = sandbox.create_repo(
            body["full_name"], private=body.get("private", True), files=body.get("files")
        )
        return 201, {"full_name": repo.full_name, "clone_url": sandbox.clone_url(repo.full_name)}
    if method == "PUT" and (m := re.fullmatch(_REPO + r"/collaborators/(?P<user>[^/]+)", path)):
        sandbox.grant(m["full"], m["user"], body["role"])
        return 200, {"role": body["role"]}
    if method == "POST" and (m := re.fullmatch(_REPO + r"/commits", path)):
        sha = sandbox.push_commit(
            m["full"], body["branch"], body["files"], body.get("message", "Change underneath")
        )
        return 201, {"sha": sha}
    if method == "POST" and (m := re.fullmatch(_REPO + r"/pulls/(?P<n>\d+)/merge", path)):
        sha = sandbox.merge_as_reviewer(
            m["full"], int(m["n"]), body.get("reviewer"), body.get("merge_method", "merge")
        )
        return 200, {"sha": sha, "merged": True}
    if method == "POST" and (m := re.fullmatch(_REPO + r"/pulls/(?P<n>\d+)/close", path)):
        pr = sandbox.close_as_reviewer(m["full"], int(m["n"]), body.get("reviewer"))
        return 200, {"number": pr.number, "state": pr.state, "merged": pr.merged}
    return 404, {"message": f"no test control {method} {path}"}
