"""The JSON GitHub answers for users, repositories, pull requests and hooks, with every field
its description requires (the response validator holds the stand-in to it). URLs point back
at the stand-in, so clients that follow them (PyGithub does) stay on it."""

from __future__ import annotations

from dataclasses import dataclass

from .model import LEGACY, Forge, Hook, Pull, Repo, User


@dataclass(frozen=True)
class Urls:
    api: str  # the API root, e.g. http://127.0.0.1:5000/api/v3
    web: str  # the "web UI" root, e.g. http://127.0.0.1:5000
    git: str  # where the repositories are served over git's HTTP protocol


def user(urls: Urls, person: User) -> dict:
    api = f"{urls.api}/users/{person.login}"
    return {
        "login": person.login,
        "id": person.id,
        "node_id": f"U_{person.id}",
        "avatar_url": f"{urls.web}/avatars/{person.login}",
        "gravatar_id": "",
        "url": api,
        "html_url": f"{urls.web}/{person.login}",
        "followers_url": f"{api}/followers",
        "following_url": f"{api}/following{{/other_user}}",
        "gists_url": f"{api}/gists{{/gist_id}}",
        "starred_url": f"{api}/starred{{/owner}}{{/repo}}",
        "subscriptions_url": f"{api}/subscriptions",
        "organizations_url": f"{api}/orgs",
        "repos_url": f"{api}/repos",
        "events_url": f"{api}/events{{/privacy}}",
        "received_events_url": f"{api}/received_events",
        "type": person.type,
        "user_view_type": "public",
        "site_admin": False,
    }


def private_user(urls: Urls, forge: Forge, person: User) -> dict:
    """GET /user: the token's own user, with the private fields."""
    owned = [r for r in forge.repos.values() if r.owner == person.login]
    private = sum(1 for r in owned if r.private)
    return {
        **user(urls, person),
        "user_view_type": "private",
        "name": person.login,
        "company": None,
        "blog": "",
        "location": None,
        "email": None,
        "hireable": None,
        "bio": None,
        "public_repos": len(owned) - private,
        "public_gists": 0,
        "followers": 0,
        "following": 0,
        "created_at": person.created_at,
        "updated_at": person.created_at,
        "private_gists": 0,
        "total_private_repos": private,
        "owned_private_repos": private,
        "disk_usage": 0,
        "collaborators": 0,
        "two_factor_authentication": True,
    }


_REPO_LINKS = {
    "archive_url": "/{archive_format}{/ref}",
    "assignees_url": "/assignees{/user}",
    "blobs_url": "/git/blobs{/sha}",
    "branches_url": "/branches{/branch}",
    "collaborators_url": "/collaborators{/collaborator}",
    "comments_url": "/comments{/number}",
    "commits_url": "/commits{/sha}",
    "compare_url": "/compare/{base}...{head}",
    "contents_url": "/contents/{+path}",
    "contributors_url": "/contributors",
    "deployments_url": "/deployments",
    "downloads_url": "/downloads",
    "events_url": "/events",
    "forks_url": "/forks",
    "git_commits_url": "/git/commits{/sha}",
    "git_refs_url": "/git/refs{/sha}",
    "git_tags_url": "/git/tags{/sha}",
    "hooks_url": "/hooks",
    "issue_comment_url": "/issues/comments{/number}",
    "issue_events_url": "/issues/events{/number}",
    "issues_url": "/issues{/number}",
    "keys_url": "/keys{/key_id}",
    "labels_url": "/labels{/name}",
    "languages_url": "/languages",
    "merges_url": "/merges",
    "milestones_url": "/milestones{/number}",
    "notifications_url": "/notifications{?since,all,participating}",
    "pulls_url": "/pulls{/number}",
    "releases_url": "/releases{/id}",
    "stargazers_url": "/stargazers",
    "statuses_url": "/statuses/{sha}",
    "subscribers_url": "/subscribers",
    "subscription_url": "/subscription",
    "tags_url": "/tags",
    "teams_url": "/teams",
    "trees_url": "/git/trees{/sha}",
}


def repository(urls: Urls, forge: Forge, repo: Repo, viewer: str | None) -> dict:
    """The full repository (GET /repos/{owner}/{repo}); also what webhooks and pull
    requests embed, which ask for less of it."""
    api = f"{urls.api}/repos/{repo.full_name}"
    html = f"{urls.web}/{repo.full_name}"
    open_pulls = sum(1 for p in repo.pulls.values() if p.state == "open")
    body: dict = {
        "id": repo.id,
        "node_id": f"R_{repo.id}",
        "name": repo.name,
        "full_name": repo.full_name,
        "owner": user(urls, forge.users[repo.owner]),
        "private": repo.private,
        "visibility": "private" if repo.private else "public",
        "html_url": html,
        "description": None,
        "fork": False,
        "url": api,
        **{key: api + suffix for key, suffix in _REPO_LINKS.items()},
        "git_url": f"{urls.git}/{repo.full_name}.git".replace("http", "git", 1),
        "ssh_url": f"git@forgesandbox.invalid:{repo.full_name}.git",
        "clone_url": f"{urls.git}/{repo.full_name}.git",
        "svn_url": html,
        "mirror_url": None,
        "homepage": None,
        "language": None,
        "forks": 0,
        "forks_count": 0,
        "stargazers_count": 0,
        "watchers": 0,
        "watchers_count": 0,
        "size": 0,
        "default_branch": repo.default_branch,
        "open_issues": open_pulls,
        "open_issues_count": open_pulls,
        "is_template": False,
        "topics": [],
        "has_issues": True,
        "has_projects": False,
        "has_wiki": False,
        "has_pages": False,
        "has_downloads": False,
        "has_discussions": False,
        "archived": False,
        "disabled": False,
        "license": None,
        "pushed_at": repo.updated_at,
        "created_at": repo.created_at,
        "updated_at": repo.updated_at,
        "allow_merge_commit": True,
        "allow_squash_merge": True,
        "allow_rebase_merge": False,
        "network_count": 0,
        "subscribers_count": 0,
    }
    if viewer is not None:
        role = repo.role_of(viewer)
        rank = ("admin", "maintain", "write", "triage", "read").index(role) if role else 5
        body["permissions"] = {
            "admin": rank <= 0,
            "maintain": rank <= 1,
            "push": rank <= 2,
            "triage": rank <= 3,
            "pull": rank <= 4 or not repo.private,
        }
    return body


def permission(urls: Urls, forge: Forge, repo: Repo, login: str) -> dict:
    role = repo.role_of(login)
    person = forge.users[login]
    return {
        "permission": LEGACY[role] if role else "none",
        "role_name": role or "none",
        "user": {**user(urls, person), "role_name": role or "none"},
    }


def _branch(urls: Urls, forge: Forge, repo: Repo, branch: str, sha: str) -> dict:
    return {
        "label": f"{repo.owner}:{branch}",
        "ref": branch,
        "sha": sha,
        "user": user(urls, forge.users[repo.owner]),
        "repo": repository(urls, forge, repo, None),
    }


def pull(urls: Urls, forge: Forge, repo: Repo, pr: Pull, *, full: bool) -> dict:
    """A pull request; ``full`` adds what only GET of one (and its webhooks) carry:
    mergeability, merge state and the counts."""
    head_sha, base_sha = forge.tips(repo, pr)
    api = f"{urls.api}/repos/{repo.full_name}"
    url = f"{api}/pulls/{pr.number}"
    html = f"{urls.web}/{repo.full_name}/pull/{pr.number}"
    issue = f"{api}/issues/{pr.number}"
    body: dict = {
        "url": url,
        "id": pr.id,
        "node_id": f"PR_{pr.id}",
        "html_url": html,
        "diff_url": f"{html}.diff",
        "patch_url": f"{html}.patch",
        "issue_url": issue,
        "commits_url": f"{url}/commits",
        "review_comments_url": f"{url}/comments",
        "review_comment_url": f"{api}/pulls/comments{{/number}}",
        "comments_url": f"{issue}/comments",
        "statuses_url": f"{api}/statuses/{head_sha}",
        "number": pr.number,
        "state": pr.state,
        "locked": False,
        "title": pr.title,
        "user": user(urls, forge.users[pr.user]),
        "body": pr.body,
        "labels": [],
        "milestone": None,
        "active_lock_reason": None,
        "created_at": pr.created_at,
        "updated_at": pr.updated_at,
        "closed_at": pr.closed_at,
        "merged_at": pr.merged_at,
        "merge_commit_sha": pr.merge_commit_sha,
        "assignee": None,
        "assignees": [],
        "requested_reviewers": [],
        "requested_teams": [],
        "head": _branch(urls, forge, repo, pr.head, head_sha),
        "base": _branch(urls, forge, repo, pr.base, base_sha),
        "_links": {
            "self": {"href": url},
            "html": {"href": html},
            "issue": {"href": issue},
            "comments": {"href": f"{issue}/comments"},
            "review_comments": {"href": f"{url}/comments"},
            "review_comment": {"href": f"{api}/pulls/comments{{/number}}"},
            "commits": {"href": f"{url}/commits"},
            "statuses": {"href": f"{api}/statuses/{head_sha}"},
        },
        "author_association": "OWNER" if pr.user == repo.owner else "COLLABORATOR",
        "auto_merge": None,
        "draft": pr.draft,
    }
    if full:
        mergeable = forge.mergeable(repo, pr)
        body |= {
            "merged": pr.merged,
            "mergeable": mergeable,
            "rebaseable": False,
            "mergeable_state": {True: "clean", False: "dirty", None: "unknown"}[mergeable],
            "merged_by": user(urls, forge.users[pr.merged_by]) if pr.merged_by else None,
            "comments": 0,
            "review_comments": 0,
            "maintainer_can_modify": False,
            "commits": repo.git.commit_count(base_sha, head_sha),
            "additions": 0,
            "deletions": 0,
            "changed_files": len(repo.git.changed_files(base_sha, head_sha)),
        }
    return body


def issue(urls: Urls, forge: Forge, repo: Repo, pr: Pull) -> dict:
    """A pull request as GitHub's issues API shows it: where it says who closed it."""
    api = f"{urls.api}/repos/{repo.full_name}"
    url = f"{api}/issues/{pr.number}"
    return {
        "id": pr.id,
        "node_id": f"I_{pr.id}",
        "url": url,
        "repository_url": api,
        "labels_url": f"{url}/labels{{/name}}",
        "comments_url": f"{url}/comments",
        "events_url": f"{url}/events",
        "html_url": f"{urls.web}/{repo.full_name}/pull/{pr.number}",
        "number": pr.number,
        "state": "open" if pr.state == "open" else "closed",
        "state_reason": None if pr.state == "open" else "completed",
        "title": pr.title,
        "body": pr.body,
        "user": user(urls, forge.users[pr.user]),
        "labels": [],
        "assignee": None,
        "assignees": [],
        "milestone": None,
        "locked": False,
        "active_lock_reason": None,
        "comments": 0,
        "pull_request": {
            "url": f"{api}/pulls/{pr.number}",
            "html_url": f"{urls.web}/{repo.full_name}/pull/{pr.number}",
            "diff_url": f"{urls.web}/{repo.full_name}/pull/{pr.number}.diff",
            "patch_url": f"{urls.web}/{repo.full_name}/pull/{pr.number}.patch",
            "merged_at": pr.merged_at,
        },
        "closed_at": pr.closed_at,
        "created_at": pr.created_at,
        "updated_at": pr.updated_at,
        "closed_by": user(urls, forge.users[pr.closed_by]) if pr.closed_by else None,
        "author_association": "OWNER" if pr.user == repo.owner else "COLLABORATOR",
    }


def hook(urls: Urls, repo: Repo, h: Hook) -> dict:
    api = f"{urls.api}/repos/{repo.full_name}/hooks/{h.id}"
    config: dict = {"url": h.url, "content_type": h.content_type, "insecure_ssl": h.insecure_ssl}
    if h.secret:
        config["secret"] = "********"  # noqa: S105 - GitHub never gives a secret back
    return {
        "type": "Repository",
        "id": h.id,
        "name": "web",
        "active": h.active,
        "events": h.events,
        "config": config,
        "updated_at": h.updated_at,
        "created_at": h.created_at,
        "url": api,
        "test_url": f"{api}/test",
        "ping_url": f"{api}/pings",
        "deliveries_url": f"{api}/deliveries",
        "last_response": h.last_response,
    }


def error(message: str, status: int, errors: list[dict] | None = None) -> dict:
    body: dict = {
        "message": message,
        "documentation_url": "https://docs.github.com/rest",
        "status": str(status),
    }
    if errors:
        body["errors"] = errors
    return body
