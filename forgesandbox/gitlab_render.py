"""What the GitLab routes of the stand-in answer and hook: users, projects, merge requests
and hooks as GitLab's REST v4 renders them, and its "Merge Request Hook" (forgesandbox.gitlab).
"""

from __future__ import annotations

import uuid

from .model import Forge, Hook, Pull, Repo
from .views import View

# GitLab's access levels for the model's roles (a repository's owner is its Owner).
ACCESS_LEVELS = {"admin": 40, "maintain": 40, "write": 30, "triage": 20, "read": 20}
OWNER = 50


def access_level(repo: Repo, login: str) -> int:
    if login == repo.owner:
        return OWNER
    role = repo.collaborators.get(login)
    return ACCESS_LEVELS[role] if role else 0


def user(forge: Forge, login: str | None, web: str) -> dict | None:
    if login is None:
        return None
    person = forge.users[login]
    return {
        "id": person.id,
        "username": person.login,
        "name": person.login,
        "state": "active",
        "avatar_url": f"{web}/avatars/{person.login}",
        "web_url": f"{web}/{person.login}",
    }


def project(call: View, repo: Repo) -> dict:
    level = access_level(repo, call.login)
    return {
        "id": repo.id,
        "name": repo.name,
        "path": repo.name,
        "path_with_namespace": repo.full_name,
        "namespace": {"path": repo.owner, "full_path": repo.owner},
        "default_branch": repo.default_branch,
        "visibility": "private" if repo.private else "public",
        "http_url_to_repo": f"{call.git}/{repo.full_name}.git",
        "web_url": f"{call.web}/{repo.full_name}",
        "created_at": repo.created_at,
        "permissions": {
            "project_access": {"access_level": level, "notification_level": 3} if level else None,
            "group_access": None,
        },
    }


def state(pull: Pull) -> str:
    return "merged" if pull.merged else "opened" if pull.state == "open" else "closed"


def merge_request(call: View, repo: Repo, pull: Pull) -> dict:
    head_sha, base_sha = call.forge.tips(repo, pull)
    mergeable = call.forge.mergeable(repo, pull)
    status = "mergeable" if mergeable else "conflict" if mergeable is False else "not_open"
    return {
        "id": pull.id,
        "iid": pull.number,
        "project_id": repo.id,
        "title": pull.title,
        "description": pull.body or "",
        "state": state(pull),
        "draft": pull.draft,
        "source_branch": pull.head,
        "target_branch": pull.base,
        "source_project_id": repo.id,
        "target_project_id": repo.id,
        "author": user(call.forge, pull.user, call.web),
        "merged_by": user(call.forge, pull.merged_by, call.web),
        "merge_user": user(call.forge, pull.merged_by, call.web),
        "closed_by": user(call.forge, getattr(pull, "closed_by", None), call.web),
        "created_at": pull.created_at,
        "updated_at": pull.updated_at,
        "merged_at": pull.merged_at,
        "closed_at": None if pull.merged else pull.closed_at,
        "sha": head_sha,
        "merge_commit_sha": pull.merge_commit_sha,
        "squash_commit_sha": None,
        "has_conflicts": mergeable is False,
        "merge_status": "can_be_merged" if mergeable else "cannot_be_merged",
        "detailed_merge_status": status,
        "diff_refs": {"base_sha": base_sha, "head_sha": head_sha, "start_sha": base_sha},
        "web_url": f"{call.web}/{repo.full_name}/-/merge_requests/{pull.number}",
    }


def hook(repo: Repo, hook: Hook) -> dict:
    return {
        "id": hook.id,
        "url": hook.url,
        "project_id": repo.id,
        "merge_requests_events": "merge_request" in hook.events,
        "push_events": "push" in hook.events,
        "enable_ssl_verification": hook.insecure_ssl == "0",
        "created_at": hook.created_at,
    }


# --- webhooks -----------------------------------------------------------------------------


def merge_request_event(call: View, repo: Repo, pull: Pull, action: str) -> None:
    """GitLab's "Merge Request Hook" to every hook of the project that asks for it."""
    attributes = merge_request(call, repo, pull)
    payload = {
        "object_kind": "merge_request",
        "event_type": "merge_request",
        "user": user(call.forge, call.login, call.web),
        "project": {
            "id": repo.id,
            "path_with_namespace": repo.full_name,
            "web_url": f"{call.web}/{repo.full_name}",
            "default_branch": repo.default_branch,
        },
        "object_attributes": {
            **{k: v for k, v in attributes.items() if k not in ("author", "merged_by")},
            "action": action,
            "url": attributes["web_url"],
            "last_commit": {"id": attributes["sha"]},
        },
    }
    for hook in repo.hooks.values():
        if hook.flavour == "gitlab" and hook.active and "merge_request" in hook.events:
            call.emit(hook, "Merge Request Hook", payload)


def delivery_headers(hook: Hook, event: str) -> dict[str, str]:
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "GitLab/forgesandbox",
        "X-Gitlab-Event": event,
        "X-Gitlab-Event-UUID": str(uuid.uuid4()),
        "X-Gitlab-Webhook-UUID": str(uuid.uuid5(uuid.NAMESPACE_URL, f"hook-{hook.id}")),
        "X-Gitlab-Instance": "forgesandbox",
    }
    if hook.secret:
        headers["X-Gitlab-Token"] = hook.secret  # GitLab sends the secret token as it is
    return headers
