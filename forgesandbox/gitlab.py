"""The GitLab REST v4 subset the stand-in speaks (what python-gitlab sends to open, read,
close and merge a merge request and to hook its events), over the same repositories and
pull requests as the GitHub routes: a GitLab merge request is the model's ``Pull``, its
``iid`` the pull request's number.

GitLab publishes no full OpenAPI description of v4, so each operation declares the
parameters GitLab's REST documentation gives it, with their types; a request naming one it
does not know, missing a required one or giving one of the wrong type is refused with
GitLab's 400 (``{"error": "title is missing"}``) before any handler sees it. Tokens come as
``PRIVATE-TOKEN`` or ``Authorization: Bearer``; errors are GitLab's ``{"message": ...}``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from . import gitlab_render as render
from .gitlab_params import BOOLEAN, INTEGER, PAGING, STRING, arguments, error_body
from .model import ForgeError, Pull, Repo, now
from .views import Routes, log_entry, newest_first, page_of

PREFIX = "/gitlab/api/v4"  # the GitLab instance is at <forge>/gitlab: python-gitlab's url

Answer = tuple[int, Any, dict[str, str]]


@dataclass
class Call(render.View):
    params: dict[str, str]
    args: dict[str, Any]

    def project(self, level: int = 20) -> Repo:
        key = unquote(self.params["id"])
        repo = next(
            (
                r
                for r in self.forge.repos.values()
                if (str(r.id) == key if key.isdigit() else r.full_name == key)
            ),
            None,
        )
        if repo is None or (render.access_level(repo, self.login) < 10 and repo.private):
            raise ForgeError(404, "404 Project Not Found")
        if render.access_level(repo, self.login) < level:
            raise ForgeError(403, "403 Forbidden")
        return repo

    def merge_request(self, repo: Repo) -> Pull:
        pull = repo.pulls.get(int(self.params["iid"]))
        if pull is None:
            raise ForgeError(404, "404 Not found")
        return pull


# --- operations ---------------------------------------------------------------------------


def get_user(call: Call) -> Answer:
    return 200, render.user(call.forge, call.login, call.web), {}


def get_project(call: Call) -> Answer:
    return 200, render.project(call, call.project()), {}


def get_member(call: Call) -> Answer:
    repo = call.project()
    person = next(
        (u for u in call.forge.users.values() if str(u.id) == call.params["user_id"]), None
    )
    level = render.access_level(repo, person.login) if person else 0
    if person is None or not level:
        raise ForgeError(404, "404 Not found")
    return 200, {**render.user(call.forge, person.login, call.web), "access_level": level}, {}


def create_merge_request(call: Call) -> Answer:
    repo = call.project(30)
    args = call.args
    try:
        pull = call.forge.open_pull(
            repo,
            call.login,
            head=args["source_branch"],
            base=args["target_branch"],
            title=args["title"],
            body=args.get("description"),
            draft=False,
        )
    except ForgeError as error:
        messages = [e.get("message") or f"{e.get('field')} is invalid" for e in error.errors or []]
        if any("already exists" in m for m in messages):
            other = next(
                p
                for p in repo.pulls.values()
                if p.state == "open" and p.head == args["source_branch"]
            )
            messages = [
                f"Another open merge request already exists for this source branch: !{other.number}"
            ]
            raise ForgeError(409, json.dumps(messages)) from None
        raise ForgeError(422, json.dumps(messages or [error.message])) from None
    render.merge_request_event(call, repo, pull, "open")
    return 201, render.merge_request(call, repo, pull), {}


def list_merge_requests(call: Call) -> Answer:
    repo = call.project()
    args = call.args
    state = args.get("state", "all")
    chosen = [
        p
        for p in newest_first(repo)
        if state in ("all", render.state(p))
        and args.get("source_branch") in (None, p.head)
        and args.get("target_branch") in (None, p.base)
    ]
    per_page = min(args.get("per_page", 20), 100)
    page = max(args.get("page", 1), 1)
    shown = page_of(chosen, page, per_page)
    pages = max(1, -(-len(chosen) // per_page))
    headers = {
        "X-Page": str(page),
        "X-Per-Page": str(per_page),
        "X-Total": str(len(chosen)),
        "X-Total-Pages": str(pages),
        "X-Next-Page": str(page + 1) if page < pages else "",
        "X-Prev-Page": str(page - 1) if page > 1 else "",
    }
    return 200, [render.merge_request(call, repo, p) for p in shown], headers


def get_merge_request(call: Call) -> Answer:
    repo = call.project()
    return 200, render.merge_request(call, repo, call.merge_request(repo)), {}


def update_merge_request(call: Call) -> Answer:
    repo = call.project()
    pull = call.merge_request(repo)
    if pull.user != call.login and render.access_level(repo, call.login) < 30:
        raise ForgeError(403, "403 Forbidden")
    args = call.args
    if "target_branch" in args and repo.git.branch_sha(args["target_branch"]) is None:
        raise ForgeError(400, "target_branch is invalid")
    for key, field in (("title", "title"), ("description", "body"), ("target_branch", "base")):
        if key in args:
            setattr(pull, field, args[key])
            pull.updated_at = now()
    event = args.get("state_event")
    if event == "close" and pull.state == "open":
        call.forge.close_pull(repo, pull)
        pull.closed_by = call.login  # type: ignore[attr-defined]
        render.merge_request_event(call, repo, pull, "close")
    elif event == "reopen" and pull.state == "closed" and not pull.merged:
        call.forge.reopen_pull(repo, pull)
        render.merge_request_event(call, repo, pull, "reopen")
    elif any(k in args for k in ("title", "description", "target_branch")):
        render.merge_request_event(call, repo, pull, "update")
    return 200, render.merge_request(call, repo, pull), {}


def merge_merge_request(call: Call) -> Answer:
    repo = call.project()
    pull = call.merge_request(repo)
    if render.access_level(repo, call.login) < 30:
        raise ForgeError(401, "401 Unauthorized")
    args = call.args
    if pull.state != "open":
        raise ForgeError(405, "405 Method Not Allowed")
    if args.get("sha") and args["sha"] != call.forge.tips(repo, pull)[0]:
        raise ForgeError(409, "SHA does not match HEAD of source branch")
    try:
        call.forge.merge_pull(
            repo,
            pull,
            call.login,
            method="squash" if args.get("squash") else "merge",
            message=args.get("merge_commit_message"),
        )
    except ForgeError as error:
        if error.status == 409:  # the target moved during the merge
            raise
        raise ForgeError(422, "Branch cannot be merged") from None
    render.merge_request_event(call, repo, pull, "merge")
    return 200, render.merge_request(call, repo, pull), {}


def create_hook(call: Call) -> Answer:
    repo = call.project(40)
    args = call.args
    events = ["merge_request"] if args.get("merge_requests_events") else []
    if args.get("push_events", True):
        events.append("push")
    hook = call.forge.add_hook(
        repo,
        url=args["url"],
        content_type="json",
        secret=args.get("token") or None,
        insecure_ssl="0" if args.get("enable_ssl_verification", True) else "1",
        events=events,
        active=True,
    )
    hook.flavour = "gitlab"  # its events are GitLab's
    return 201, render.hook(repo, hook), {}


def list_hooks(call: Call) -> Answer:
    repo = call.project(40)
    return 200, [render.hook(repo, h) for h in repo.hooks.values() if h.flavour == "gitlab"], {}


OPERATIONS = Routes()
_op = OPERATIONS.add


_MR = "/projects/{id}/merge_requests"
_op("GET", "/user", get_user)
_op("GET", "/projects/{id}", get_project, optional={"license": BOOLEAN, "statistics": BOOLEAN})
_op("GET", "/projects/{id}/members/all/{user_id}", get_member)
_op(
    "POST",
    _MR,
    create_merge_request,
    required={"source_branch": STRING, "target_branch": STRING, "title": STRING},
    optional={
        "description": STRING,
        "remove_source_branch": BOOLEAN,
        "squash": BOOLEAN,
        "labels": STRING,
        "assignee_id": INTEGER,
    },
)
_op(
    "GET",
    _MR,
    list_merge_requests,
    optional={
        "state": STRING,
        "source_branch": STRING,
        "target_branch": STRING,
        "order_by": STRING,
        "sort": STRING,
        **PAGING,
    },
)
_op("GET", _MR + "/{iid}", get_merge_request)
_op(
    "PUT",
    _MR + "/{iid}",
    update_merge_request,
    optional={
        "title": STRING,
        "description": STRING,
        "target_branch": STRING,
        "state_event": STRING,
        "remove_source_branch": BOOLEAN,
        "squash": BOOLEAN,
    },
)
_op(
    "PUT",
    _MR + "/{iid}/merge",
    merge_merge_request,
    optional={
        "merge_commit_message": STRING,
        "squash": BOOLEAN,
        "sha": STRING,
        "should_remove_source_branch": BOOLEAN,
    },
)
_op(
    "POST",
    "/projects/{id}/hooks",
    create_hook,
    required={"url": STRING},
    optional={
        "merge_requests_events": BOOLEAN,
        "push_events": BOOLEAN,
        "token": STRING,
        "enable_ssl_verification": BOOLEAN,
        "name": STRING,
        "description": STRING,
    },
)
_op("GET", "/projects/{id}/hooks", list_hooks, optional=PAGING)


def serve(
    view: render.View, method: str, path: str, query: list[tuple[str, str]], body: bytes
) -> tuple[int, Any, dict[str, str]]:
    """One request under PREFIX from an authenticated user: (status, JSON body, headers)."""
    resolved = OPERATIONS.resolve(method, path)
    if resolved is None:
        return 404, {"error": "404 Not Found"}, {}
    operation, params = resolved
    try:
        given = json.loads(body) if body else {}
    except ValueError:
        return 400, {"error": "The request body is not JSON"}, {}
    if not isinstance(given, dict):
        return 400, {"error": "The request body is not a JSON object"}, {}
    try:
        args = arguments(operation, {**dict(query), **given})
        call = Call(view.forge, view.web, view.git, view.login, view.emit, params, args)
        with view.forge.lock:
            return operation.handler(call)
    except ForgeError as error:
        return error.status, error_body(error), {}


def handle(
    view: render.View | None, method: str, path: str, query: list[tuple[str, str]], body: bytes
) -> tuple[int, Any, dict[str, str], dict[str, Any]]:
    """A request under PREFIX (`view` None: no token or an unknown one): status, JSON body,
    headers, and the entry for the request log."""
    if view is None:
        status, payload, extra = 401, {"message": "401 Unauthorized"}, {}
    else:
        status, payload, extra = serve(view, method, path.removeprefix(PREFIX) or "/", query, body)
    refused = payload.get("error") if status == 400 else None
    entry = log_entry(view, method, path, query, status, refused)
    return status, payload, {"Content-Type": "application/json", **extra}, entry
