"""The Gitea API v1 subset the stand-in speaks (Forgejo's is the same): the user, a
repository with the caller's permissions, pull requests opened, listed, read, edited, closed
and merged, and hooks, over the same repositories and pull requests as the GitHub and GitLab
routes. Served under ``/gitea/api/v1``; tokens come as ``Authorization: token X`` (or
``Bearer``).

Each operation declares the parameters Gitea's API documentation gives it, with their types;
a request naming one it does not take, missing a required one or giving one of the wrong type
is refused with Gitea's 422 (``{"message": ..., "url": ...}``) before any handler sees it. A
repository the caller may not see is 404, as Gitea hides it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol

from . import gitea_render as render
from .gitlab_params import BOOLEAN, INTEGER, STRING, Operation
from .model import ForgeError, Hook, Pull, Repo
from .views import Routes, log_entry, newest_first, page_of

PREFIX = "/gitea/api/v1"  # the Gitea instance is at <forge>/gitea
LIST, OBJECT = list, dict
Answer = tuple[int, Any, dict[str, str]]


class Sandbox(Protocol):
    """What these routes use of ``server.ForgeSandbox`` (a Protocol: no import cycle)."""

    forge: Any
    url: str
    deliverer: Any
    urls: Any

    def _record(self, entry: dict) -> None: ...


@dataclass
class Call(render.View):
    params: dict[str, str]
    args: dict[str, Any]

    def repo(self, role: str = "read") -> Repo:
        repo = self.forge.repos.get((self.params["owner"], self.params["repo"]))
        if repo is None or not repo.may(self.login, "read"):
            raise ForgeError(404, "The target couldn't be found.")
        if not repo.may(self.login, role):
            raise ForgeError(403, "user should have a permission to write to this repository")
        return repo

    def pull(self, repo: Repo) -> Pull:
        index = self.params["index"]
        pull = repo.pulls.get(int(index)) if index.isdigit() else None
        if pull is None:
            raise ForgeError(404, "The target couldn't be found.")
        return pull


def view_of(sandbox: Sandbox, login: str) -> render.View:
    web, git = sandbox.url + "/gitea", sandbox.urls.git
    return render.View(sandbox.forge, web, git, login, sandbox.deliverer.enqueue)


def reviewer_event(sandbox: Sandbox, reviewer: str, repo: Repo, pull: Pull) -> None:
    """What a reviewer closing or merging in the "web UI" sends to Gitea hooks."""
    render.pull_request_event(view_of(sandbox, reviewer), repo, pull, "closed")


# --- operations ---------------------------------------------------------------------------


def get_user(call: Call) -> Answer:
    return 200, render.user(call.forge, call.login, call.web), {}


def get_repo(call: Call) -> Answer:
    return 200, render.repository(call, call.repo()), {}


def create_pull(call: Call) -> Answer:
    repo = call.repo("write")
    args = call.args
    head, base = args["head"], args["base"]
    for other in repo.pulls.values():
        if other.state == "open" and other.head == head and other.base == base:
            raise ForgeError(
                409,
                f"pull request already exists for these targets [id: {other.id}, issue_id: "
                f"{other.id}, head_repo_id: {repo.id}, base_repo_id: {repo.id}, "
                f"head_branch: {head}, base_branch: {base}]",
            )
    try:
        pull = call.forge.open_pull(
            repo,
            call.login,
            head=head,
            base=base,
            title=args["title"],
            body=args.get("body"),
            draft=False,
        )
    except ForgeError as error:
        said = [e.get("message") or f"{e.get('field')} is invalid" for e in error.errors or []]
        raise ForgeError(422 if said else error.status, "; ".join(said) or error.message) from None
    render.pull_request_event(call, repo, pull, "opened")
    return 201, render.pull_request(call, repo, pull), {}


def list_pulls(call: Call) -> Answer:
    repo = call.repo()
    state = call.args.get("state", "open")
    chosen = [p for p in newest_first(repo) if state in ("all", p.state)]
    limit = min(max(call.args.get("limit", 30), 1), 50)
    page = max(call.args.get("page", 1), 1)
    shown = page_of(chosen, page, limit)
    headers = {"X-Total-Count": str(len(chosen))}
    return 200, [render.pull_request(call, repo, p) for p in shown], headers


def get_pull(call: Call) -> Answer:
    repo = call.repo()
    return 200, render.pull_request(call, repo, call.pull(repo)), {}


def edit_pull(call: Call) -> Answer:
    repo = call.repo()
    pull = call.pull(repo)
    if pull.user != call.login and not repo.may(call.login, "write"):
        raise ForgeError(403, "user should have a permission to write to this repository")
    args = call.args
    if "base" in args and repo.git.branch_sha(args["base"]) is None:
        raise ForgeError(404, f"branch {args['base']} does not exist")
    for field in ("title", "body", "base"):
        if field in args:
            setattr(pull, field, args[field])
    state = args.get("state")
    if state == "closed" and pull.state == "open":
        call.forge.close_pull(repo, pull)
        pull.closed_by = call.login
        render.pull_request_event(call, repo, pull, "closed")
    elif state == "open" and pull.state == "closed":
        if pull.merged:
            raise ForgeError(409, "cannot change state of this pull request, it was merged")
        call.forge.reopen_pull(repo, pull)
        render.pull_request_event(call, repo, pull, "reopened")
    elif any(field in args for field in ("title", "body", "base")):
        render.pull_request_event(call, repo, pull, "edited")
    return 201, render.pull_request(call, repo, pull), {}


def merge_pull(call: Call) -> Answer:
    repo = call.repo("write")
    pull = call.pull(repo)
    args = call.args
    if args["Do"] not in ("merge", "squash"):
        raise ForgeError(405, f"merge style {args['Do']} is not allowed")
    if pull.state != "open" or not call.forge.mergeable(repo, pull):
        raise ForgeError(405, "Please try again later")
    if args.get("head_commit_id") and args["head_commit_id"] != call.forge.tips(repo, pull)[0]:
        raise ForgeError(409, "head out of date")
    call.forge.merge_pull(
        repo, pull, call.login, method=args["Do"], message=args.get("MergeMessageField")
    )
    render.pull_request_event(call, repo, pull, "closed")
    return 200, None, {}


def create_hook(call: Call) -> Answer:
    repo = call.repo("admin")
    args = call.args
    config = args["config"]
    if args["type"] not in ("gitea", "forgejo") or not isinstance(config.get("url"), str):
        raise ForgeError(422, "Invalid hook type or config url")
    if config.get("content_type", "json") not in ("json", "form"):
        raise ForgeError(422, "Invalid content type")
    made: Hook = call.forge.add_hook(
        repo,
        url=config["url"],
        content_type=config.get("content_type", "json"),
        secret=config.get("secret") or None,
        insecure_ssl="0",
        events=args.get("events") or ["push"],
        active=args.get("active", False),
    )
    made.flavour = "gitea"  # its events are Gitea's
    return 201, render.hook(made), {}


def list_hooks(call: Call) -> Answer:
    repo = call.repo("admin")
    return 200, [render.hook(h) for h in repo.hooks.values() if h.flavour == "gitea"], {}


OPERATIONS = Routes()
_op = OPERATIONS.add


_REPO, _PAGING = "/repos/{owner}/{repo}", {"page": INTEGER, "limit": INTEGER}
_op("GET", "/user", get_user)
_op("GET", _REPO, get_repo)
_op(
    "POST",
    _REPO + "/pulls",
    create_pull,
    required={"head": STRING, "base": STRING, "title": STRING},
    optional={"body": STRING, "assignee": STRING, "labels": LIST, "milestone": INTEGER},
)
_op("GET", _REPO + "/pulls", list_pulls, optional={"state": STRING, "sort": STRING, **_PAGING})
_op("GET", _REPO + "/pulls/{index}", get_pull)
_op(
    "PATCH",
    _REPO + "/pulls/{index}",
    edit_pull,
    optional={"title": STRING, "body": STRING, "base": STRING, "state": STRING},
)
_op(
    "POST",
    _REPO + "/pulls/{index}/merge",
    merge_pull,
    required={"Do": STRING},
    optional={
        "MergeMessageField": STRING,
        "MergeTitleField": STRING,
        "head_commit_id": STRING,
        "delete_branch_after_merge": BOOLEAN,
    },
)
_op(
    "POST",
    _REPO + "/hooks",
    create_hook,
    required={"type": STRING, "config": OBJECT},
    optional={"events": LIST, "active": BOOLEAN, "branch_filter": STRING},
)
_op("GET", _REPO + "/hooks", list_hooks, optional=_PAGING)

CHOICES = {"state": ("open", "closed", "all")}


def arguments(operation: Operation, given: dict[str, Any]) -> dict[str, Any]:
    """The request's parameters, checked as Gitea's binding does, or ForgeError 422."""
    known = {**operation.required, **operation.optional}
    for name in operation.required:
        if given.get(name) in (None, ""):
            raise ForgeError(422, f"[{name}]: Required")
    for name, value in given.items():
        kind = known.get(name)
        if kind is None:
            raise ForgeError(422, f"[{name}]: not a field of this operation")
        if kind is INTEGER and isinstance(value, str) and value.isdigit():
            given[name] = value = int(value)
        if kind is BOOLEAN and isinstance(value, str) and value in ("true", "false"):
            given[name] = value = value == "true"
        if not isinstance(value, kind) or (kind is INTEGER and isinstance(value, bool)):
            raise ForgeError(422, f"[{name}]: cannot unmarshal into {kind.__name__}")
        if name in CHOICES and value not in CHOICES[name]:
            raise ForgeError(422, f"[{name}]: not one of {', '.join(CHOICES[name])}")
    return given


def _answer(view: render.View | None, method: str, path: str, query, body: bytes) -> Answer:
    if view is None:
        return 401, {"message": "token is required"}, {}
    resolved = OPERATIONS.resolve(method, path)
    if resolved is None:
        return 404, render.error("not found", view.web), {}
    operation, params = resolved
    try:
        given = json.loads(body) if body else {}
    except ValueError:
        given = None
    if not isinstance(given, dict):
        return 422, render.error("the request body is not a JSON object", view.web), {}
    try:
        args = arguments(operation, {**dict(query), **given})
        call = Call(view.forge, view.web, view.git, view.login, view.emit, params, args)
        with view.forge.lock:
            return operation.handler(call)
    except ForgeError as error:
        return error.status, render.error(error.message, view.web), {}


def handle(
    sandbox: Sandbox, method: str, path: str, query: list[tuple[str, str]], headers, body: bytes
) -> tuple[int, bytes, dict[str, str]]:
    """A request under PREFIX, answered and logged."""
    scheme, _, token = headers.get("Authorization", "").partition(" ")
    known = scheme.lower() in ("token", "bearer") and token.strip()
    person = sandbox.forge.user_of_token(token.strip()) if known else None
    view = view_of(sandbox, person.login) if person else None
    status, payload, extra = _answer(view, method, path.removeprefix(PREFIX) or "/", query, body)
    refused = payload.get("message") if status == 422 else None
    sandbox._record(log_entry(view, method, path, query, status, refused))
    data = json.dumps(payload).encode() if payload is not None else b""
    return status, data, {"Content-Type": "application/json;charset=utf-8", **extra}
