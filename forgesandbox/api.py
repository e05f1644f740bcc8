"""The GitHub REST subset the stand-in speaks, one function per operation. Each gets the
call (who, which path parameters, query, JSON body) and answers ``(status, body, headers)``
or raises ``ForgeError``; events for webhooks go to ``call.emit``. Requests reach these only
after the OpenAPI validator let them through, so a body's fields have the documented types."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from . import render
from .model import Forge, ForgeError, Hook, Pull, Repo, not_found, now

Answer = tuple[int, Any, dict[str, str]]


@dataclass
class Call:
    forge: Forge
    urls: render.Urls
    login: str
    params: dict[str, str]
    query: dict[str, str]
    body: Any
    # (repository, event, payload, only this hook or every hook that asks for the event)
    emit: Callable[[Repo, str, dict, Hook | None], None]
    headers: dict[str, str] = field(default_factory=dict)

    def repo(self, role: str = "read") -> Repo:
        return self.forge.repo_for(self.login, self.params["owner"], self.params["repo"], role)

    def pull(self, repo: Repo) -> Pull:
        return self.forge.pull(repo, int(self.params["pull_number"]))


def _ok(body: Any, status: int = 200, **headers: str) -> Answer:
    return status, body, headers


def get_user(call: Call) -> Answer:
    return _ok(render.private_user(call.urls, call.forge, call.forge.users[call.login]))


def get_repo(call: Call) -> Answer:
    repo = call.repo()
    return _ok(render.repository(call.urls, call.forge, repo, call.login))


def get_permission(call: Call) -> Answer:
    repo = call.repo()
    login = call.params["username"]
    if login not in call.forge.users:
        raise not_found()
    return _ok(render.permission(call.urls, call.forge, repo, login))


def pull_event(call: Call, repo: Repo, pr: Pull, action: str) -> None:
    call.emit(
        repo,
        "pull_request",
        {
            "action": action,
            "number": pr.number,
            "pull_request": render.pull(call.urls, call.forge, repo, pr, full=True),
            "repository": render.repository(call.urls, call.forge, repo, None),
            "sender": render.user(call.urls, call.forge.users[call.login]),
        },
        None,
    )


def create_pull(call: Call) -> Answer:
    repo = call.repo()
    body = call.body
    if not body.get("title") and not body.get("issue"):
        raise ForgeError(
            422,
            "Validation Failed",
            [{"resource": "PullRequest", "field": "title", "code": "missing_field"}],
        )
    if "issue" in body:
        raise ForgeError(
            422,
            "Validation Failed",
            [{"resource": "PullRequest", "field": "issue", "code": "invalid"}],
        )
    pr = call.forge.open_pull(
        repo,
        call.login,
        head=body["head"],
        base=body["base"],
        title=body["title"],
        body=body.get("body"),
        draft=bool(body.get("draft", False)),
    )
    pull_event(call, repo, pr, "opened")
    url = f"{call.urls.api}/repos/{repo.full_name}/pulls/{pr.number}"
    return _ok(render.pull(call.urls, call.forge, repo, pr, full=True), 201, Location=url)


def list_pulls(call: Call) -> Answer:
    repo = call.repo()
    state = call.query.get("state", "open")
    head = call.query.get("head")
    base = call.query.get("base")
    pulls = []
    for pr in sorted(repo.pulls.values(), key=lambda p: p.number, reverse=True):
        if state != "all" and pr.state != state:
            continue
        if head and f"{repo.owner}:{pr.head}" != head and pr.head != head:
            continue
        if base and pr.base != base:
            continue
        pulls.append(pr)
    if call.query.get("direction") == "asc":
        pulls.reverse()
    per_page = min(int(call.query.get("per_page", 30)), 100)
    page = max(int(call.query.get("page", 1)), 1)
    chosen = pulls[(page - 1) * per_page : page * per_page]
    headers = {}
    if page * per_page < len(pulls):
        nxt = f"{call.urls.api}/repos/{repo.full_name}/pulls?" + "&".join(
            f"{k}={v}"
            for k, v in {**call.query, "page": str(page + 1), "per_page": str(per_page)}.items()
        )
        headers["Link"] = f'<{nxt}>; rel="next"'
    body = [render.pull(call.urls, call.forge, repo, pr, full=False) for pr in chosen]
    return 200, body, headers


def get_pull(call: Call) -> Answer:
    repo = call.repo()
    return _ok(render.pull(call.urls, call.forge, repo, call.pull(repo), full=True))


def get_issue(call: Call) -> Answer:
    """Only pull requests are issues here (the issues API is how GitHub says who closed
    one)."""
    repo = call.repo()
    return _ok(
        render.issue(
            call.urls, call.forge, repo, call.forge.pull(repo, int(call.params["issue_number"]))
        )
    )


def update_pull(call: Call) -> Answer:
    repo = call.repo()
    pr = call.pull(repo)
    if pr.user != call.login and not repo.may(call.login, "write"):
        raise ForgeError(403, "Must have push access to repository")
    body = call.body or {}
    if "base" in body and repo.git.branch_sha(body["base"]) is None:
        raise ForgeError(
            422,
            "Validation Failed",
            [{"resource": "PullRequest", "field": "base", "code": "invalid"}],
        )
    edited = {key for key in ("title", "body", "base") if key in body}
    for key in edited:
        setattr(pr, key, body[key])
    if edited:
        pr.updated_at = now()
        pull_event(call, repo, pr, "edited")
    state = body.get("state")
    if state == "closed" and pr.state == "open":
        call.forge.close_pull(repo, pr)
        pull_event(call, repo, pr, "closed")
    elif state == "open" and pr.state == "closed":
        call.forge.reopen_pull(repo, pr)
        pull_event(call, repo, pr, "reopened")
    return _ok(render.pull(call.urls, call.forge, repo, pr, full=True))


def merge_pull(call: Call) -> Answer:
    repo = call.repo("write")
    pr = call.pull(repo)
    body = call.body or {}
    sha = call.forge.merge_pull(
        repo,
        pr,
        call.login,
        sha=body.get("sha"),
        method=body.get("merge_method", "merge"),
        title=body.get("commit_title"),
        message=body.get("commit_message"),
    )
    pull_event(call, repo, pr, "closed")
    return _ok({"sha": sha, "merged": True, "message": "Pull Request successfully merged"})


def create_hook(call: Call) -> Answer:
    repo = _hooks_repo(call)
    body = call.body or {}
    config = body.get("config") or {}
    if not config.get("url"):
        raise ForgeError(
            422,
            "Validation Failed",
            [{"resource": "Hook", "code": "custom", "message": "Config must contain a url"}],
        )
    insecure = config.get("insecure_ssl", "0")
    hook = call.forge.add_hook(
        repo,
        url=config["url"],
        content_type=config.get("content_type", "form"),
        secret=config.get("secret") or None,
        insecure_ssl=str(insecure),
        events=body.get("events") or ["push"],
        active=body.get("active", True),
    )
    rendered = render.hook(call.urls, repo, hook)
    # GitHub says hello to a new hook.
    call.emit(
        repo,
        "ping",
        {
            "zen": "Keep it logically awesome.",
            "hook_id": hook.id,
            "hook": rendered,
            "repository": render.repository(call.urls, call.forge, repo, None),
            "sender": render.user(call.urls, call.forge.users[call.login]),
        },
        hook,
    )
    return _ok(rendered, 201, Location=rendered["url"])


def list_hooks(call: Call) -> Answer:
    repo = _hooks_repo(call)
    return _ok([render.hook(call.urls, repo, h) for h in repo.hooks.values()])


def _hook(call: Call) -> tuple[Repo, Hook]:
    repo = _hooks_repo(call)
    hook = repo.hooks.get(int(call.params["hook_id"]))
    if hook is None:
        raise not_found()
    return repo, hook


def get_hook(call: Call) -> Answer:
    repo, hook = _hook(call)
    return _ok(render.hook(call.urls, repo, hook))


def update_hook(call: Call) -> Answer:
    """GitHub's PATCH of a hook: a ``config`` given is its new configuration, and without a
    ``secret`` the old one is removed (as GitHub documents); ``events`` replaces the list,
    ``add_events`` and ``remove_events`` change it."""
    repo, hook = _hook(call)
    body = call.body or {}
    if "config" in body:
        config = body["config"]
        if not config.get("url", hook.url):
            raise ForgeError(
                422,
                "Validation Failed",
                [{"resource": "Hook", "code": "custom", "message": "Config must contain a url"}],
            )
        hook.url = config.get("url", hook.url)
        hook.content_type = config.get("content_type", hook.content_type)
        hook.insecure_ssl = str(config.get("insecure_ssl", hook.insecure_ssl))
        hook.secret = config.get("secret") or None
    events = list(body.get("events", hook.events))
    events += [e for e in body.get("add_events", []) if e not in events]
    hook.events = [e for e in events if e not in body.get("remove_events", [])]
    hook.active = body.get("active", hook.active)
    hook.updated_at = now()
    return _ok(render.hook(call.urls, repo, hook))


def delete_hook(call: Call) -> Answer:
    repo, hook = _hook(call)
    del repo.hooks[hook.id]
    return 204, None, {}


def _hooks_repo(call: Call) -> Repo:
    # GitHub hides a repository's hooks from anyone but its admins.
    repo = call.repo()
    if not repo.may(call.login, "admin"):
        raise not_found()
    return repo


_SEGMENT = r"(?P<{}>[^/]+)"
ROUTES: list[tuple[str, re.Pattern[str], Callable[[Call], Answer]]] = []


def _route(method: str, template: str, handler: Callable[[Call], Answer]) -> None:
    pattern = re.sub(r"\{(\w+)\}", lambda m: _SEGMENT.format(m[1]), template)
    for number in ("pull_number", "hook_id"):
        pattern = pattern.replace(f"(?P<{number}>[^/]+)", rf"(?P<{number}>\d+)")
    ROUTES.append((method, re.compile(f"^{pattern}$"), handler))


_route("GET", "/user", get_user)
_route("GET", "/repos/{owner}/{repo}", get_repo)
_route("GET", "/repos/{owner}/{repo}/collaborators/{username}/permission", get_permission)
_route("GET", "/repos/{owner}/{repo}/pulls", list_pulls)
_route("POST", "/repos/{owner}/{repo}/pulls", create_pull)
_route("GET", "/repos/{owner}/{repo}/pulls/{pull_number}", get_pull)
_route("PATCH", "/repos/{owner}/{repo}/pulls/{pull_number}", update_pull)
_route("PUT", "/repos/{owner}/{repo}/pulls/{pull_number}/merge", merge_pull)
_route("GET", "/repos/{owner}/{repo}/issues/{issue_number}", get_issue)
_route("GET", "/repos/{owner}/{repo}/hooks", list_hooks)
_route("POST", "/repos/{owner}/{repo}/hooks", create_hook)
_route("GET", "/repos/{owner}/{repo}/hooks/{hook_id}", get_hook)
_route("PATCH", "/repos/{owner}/{repo}/hooks/{hook_id}", update_hook)
_route("DELETE", "/repos/{owner}/{repo}/hooks/{hook_id}", delete_hook)


def resolve(method: str, path: str) -> tuple[Callable[[Call], Answer], dict[str, str]] | None:
    """The operation for a path, or None (404; GitHub also answers 404 for a wrong method)."""
    for route_method, pattern, handler in ROUTES:
        if route_method == method and (match := pattern.match(path)):
            return handler, match.groupdict()
    return None
