"""What the Gitea routes of the stand-in answer and hook: users, repositories, pull requests
and hooks as Gitea's API v1 renders them (Forgejo's is the same), and its ``pull_request``
webhook, signed in ``X-Gitea-Signature`` (forgesandbox.gitea)."""

from __future__ import annotations

import hashlib
import hmac
import uuid

from .model import Forge, Hook, Pull, Repo
from .views import View


def user(forge: Forge, login: str | None, web: str) -> dict | None:
    if login is None:
        return None
    person = forge.users[login]
    return {
        "id": person.id,
        "login": person.login,
        "username": person.login,
        "full_name": "",
        "email": f"{person.login}@noreply.forgesandbox",
        "avatar_url": f"{web}/avatars/{person.login}",
        "html_url": f"{web}/{person.login}",
        "is_admin": False,
    }


def repository(view: View, repo: Repo) -> dict:
    return {
        "id": repo.id,
        "owner": user(view.forge, repo.owner, view.web),
        "name": repo.name,
        "full_name": repo.full_name,
        "private": repo.private,
        "default_branch": repo.default_branch,
        "html_url": f"{view.web}/{repo.full_name}",
        "clone_url": f"{view.git}/{repo.full_name}.git",
        "created_at": repo.created_at,
        "updated_at": repo.updated_at,
        "permissions": {
            "admin": repo.may(view.login, "admin"),
            "push": repo.may(view.login, "write"),
            "pull": repo.may(view.login, "read"),
        },
    }


def pull_request(view: View, repo: Repo, pull: Pull) -> dict:
    head_sha, base_sha = view.forge.tips(repo, pull)
    html_url = f"{view.web}/{repo.full_name}/pulls/{pull.number}"
    return {
        "id": pull.id,
        "number": pull.number,
        "url": html_url,
        "html_url": html_url,
        "diff_url": html_url + ".diff",
        "user": user(view.forge, pull.user, view.web),
        "title": pull.title,
        "body": pull.body or "",
        "state": "closed" if pull.state == "closed" else "open",
        "draft": pull.draft,
        "mergeable": bool(view.forge.mergeable(repo, pull)),
        "merged": pull.merged,
        "merged_at": pull.merged_at,
        "merged_by": user(view.forge, pull.merged_by, view.web),
        "merge_commit_sha": pull.merge_commit_sha,
        "head": {"label": pull.head, "ref": pull.head, "sha": head_sha, "repo_id": repo.id},
        "base": {"label": pull.base, "ref": pull.base, "sha": base_sha, "repo_id": repo.id},
        "created_at": pull.created_at,
        "updated_at": pull.updated_at,
        "closed_at": pull.closed_at,
    }


def hook(hook: Hook) -> dict:
    return {
        "id": hook.id,
        "type": "gitea",
        "config": {"url": hook.url, "content_type": hook.content_type},
        "events": hook.events,
        "active": hook.active,
        "created_at": hook.created_at,
        "updated_at": hook.updated_at,
    }


def error(message: str, web: str) -> dict:
    return {"message": message, "url": f"{web}/api/swagger"}


# --- webhooks -----------------------------------------------------------------------------


def pull_request_event(view: View, repo: Repo, pull: Pull, action: str) -> None:
    """Gitea's ``pull_request`` event to every active Gitea hook of the repository that
    asks for it."""
    payload = {
        "action": action,
        "number": pull.number,
        "pull_request": pull_request(view, repo, pull),
        "repository": {k: v for k, v in repository(view, repo).items() if k != "permissions"},
        "sender": user(view.forge, view.login, view.web),
    }
    for each in repo.hooks.values():
        if each.flavour == "gitea" and each.active and "pull_request" in each.events:
            view.emit(each, "pull_request", payload)


def delivery_headers(hook: Hook, event: str, body: bytes) -> dict[str, str]:
    """Gitea's headers: the signature is the bare hex HMAC-SHA256 of the body."""
    headers = {
        "Content-Type": "application/x-www-form-urlencoded"
        if hook.content_type == "form"
        else "application/json",
        "User-Agent": "Go-http-client/1.1",
        "X-Gitea-Event": event,
        "X-Gitea-Event-Type": event,
        "X-Gitea-Delivery": str(uuid.uuid4()),
        "X-Gitea-Hook-Installation-Target-Type": "repository",
    }
    if hook.secret:
        digest = hmac.new(hook.secret.encode(), body, hashlib.sha256).hexdigest()
        headers["X-Gitea-Signature"] = digest
    return headers
