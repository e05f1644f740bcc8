"""The forge's state: users and their tokens, repositories (each a bare git repository),
collaborators, pull requests and webhooks, behind one lock. No HTTP here: the API (``api``)
and the test controls (``ForgeSandbox``) both act through it, and it raises ``ForgeError``
with the status and message GitHub answers."""

from __future__ import annotations

import itertools
import secrets
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from .gitrepo import Repository

# Highest first; GitHub's legacy `permission` folds maintain into write and triage into read.
ROLES = ("admin", "maintain", "write", "triage", "read")
LEGACY = {"admin": "admin", "maintain": "write", "write": "write", "triage": "read", "read": "read"}
ROLE_ALIASES = {"push": "write", "pull": "read"}


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class ForgeError(Exception):
    """An answer GitHub gives instead of doing it: status, message, and for 422 its errors."""

    def __init__(self, status: int, message: str, errors: list[dict] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.errors = errors


def not_found() -> ForgeError:
    return ForgeError(404, "Not Found")


@dataclass
class User:
    login: str
    id: int
    type: str = "User"  # or "Organization" for an owner that is not a person
    created_at: str = field(default_factory=now)


@dataclass
class Hook:
    id: int
    url: str
    content_type: str
    secret: str | None
    insecure_ssl: str
    events: list[str]
    active: bool
    created_at: str = field(default_factory=now)
    updated_at: str = field(default_factory=now)
    last_response: dict = field(
        default_factory=lambda: {"code": None, "status": "unused", "message": None}
    )
    flavour: str = "github"  # whose API made it, and so whose events and headers it gets


@dataclass
class Pull:
    number: int
    id: int
    title: str
    body: str | None
    head: str
    base: str
    user: str
    draft: bool = False
    state: str = "open"
    merged: bool = False
    merged_by: str | None = None
    merge_commit_sha: str | None = None
    created_at: str = field(default_factory=now)
    updated_at: str = field(default_factory=now)
    closed_at: str | None = None
    merged_at: str | None = None
    # Kept when the pull request closes, so it still says what it was about after the
    # branches move on or go away; while open, the branches' tips are read live.
    head_sha: str = ""
    base_sha: str = ""
    closed_by: str | None = None


@dataclass
class Repo:
    owner: str
    name: str
    id: int
    private: bool
    default_branch: str
    git: Repository
    collaborators: dict[str, str] = field(default_factory=dict)  # login -> role
    pulls: dict[int, Pull] = field(default_factory=dict)
    hooks: dict[int, Hook] = field(default_factory=dict)
    created_at: str = field(default_factory=now)
    updated_at: str = field(default_factory=now)

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"

    def role_of(self, login: str) -> str | None:
        if login == self.owner:
            return "admin"
        return self.collaborators.get(login)

    def may(self, login: str, role: str) -> bool:
        held = self.role_of(login)
        if held is None:
            return role == "read" and not self.private
        return ROLES.index(held) <= ROLES.index(role)


class Forge:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.lock = threading.RLock()
        self.users: dict[str, User] = {}
        self.tokens: dict[str, str] = {}  # token -> login
        self.repos: dict[tuple[str, str], Repo] = {}
        self._ids = itertools.count(1001)

    def next_id(self) -> int:
        return next(self._ids)

    # -- people --------------------------------------------------------------------------

    def add_user(self, login: str, token: str | None = None, *, kind: str = "User") -> str:
        """A user (created once) and a token for them; returns the token."""
        with self.lock:
            if login not in self.users:
                self.users[login] = User(login=login, id=self.next_id(), type=kind)
            if kind == "Organization":
                return ""
            token = token or "ghp_" + secrets.token_urlsafe(27)
            self.tokens[token] = login
            return token

    def user_of_token(self, token: str) -> User | None:
        login = self.tokens.get(token)
        return self.users.get(login) if login else None

    # -- repositories --------------------------------------------------------------------

    def create_repo(
        self,
        owner: str,
        name: str,
        *,
        private: bool = True,
        default_branch: str = "main",
        files: dict[str, str] | None = None,
    ) -> Repo:
        with self.lock:
            if (owner, name) in self.repos:
                raise ForgeError(422, "Repository creation failed.", [_already_exists("name")])
            if owner not in self.users:
                self.add_user(owner, kind="Organization")
            first = {"README.md": f"# {name}\n"} if files is None else files
            path = self.root / owner / f"{name}.git"
            # One on disk (a restart over its root) is kept, not given a new first commit.
            kept = (path / "HEAD").is_file()
            git = Repository(path) if kept else Repository.create(path, default_branch, first)
            repo = Repo(
                owner=owner,
                name=name,
                id=self.next_id(),
                private=private,
                default_branch=default_branch,
                git=git,
            )
            self.repos[(owner, name)] = repo
            return repo

    def grant(self, owner: str, name: str, login: str, role: str) -> None:
        """Make ``login`` a collaborator with ``role`` (admin, maintain, write, triage, read;
        push and pull as their old names); ``none`` removes them."""
        role = ROLE_ALIASES.get(role, role)
        with self.lock:
            repo = self.repos[(owner, name)]
            if login not in self.users:
                self.add_user(login)
            if role == "none":
                repo.collaborators.pop(login, None)
            elif role in ROLES:
                repo.collaborators[login] = role
            else:
                raise ValueError(f"unknown role {role!r}; one of {', '.join(ROLES)} or none")

    def repo_for(self, login: str, owner: str, name: str, role: str = "read") -> Repo:
        """The repository if ``login`` may see it; 404 when they cannot (GitHub hides it), 403
        when they see it but may not do what ``role`` allows."""
        repo = self.repos.get((owner, name))
        if repo is None or not repo.may(login, "read"):
            raise not_found()
        if not repo.may(login, role):
            raise ForgeError(403, "Must have push access to repository")
        return repo

    # -- pull requests -------------------------------------------------------------------

    def open_pull(
        self,
        repo: Repo,
        login: str,
        *,
        head: str,
        base: str,
        title: str,
        body: str | None,
        draft: bool,
    ) -> Pull:
        head_branch = head.split(":", 1)[1] if ":" in head else head
        with self.lock:
            head_sha = repo.git.branch_sha(head_branch)
            base_sha = repo.git.branch_sha(base)
            if head_sha is None:
                raise ForgeError(422, "Validation Failed", [_invalid("head")])
            if base_sha is None:
                raise ForgeError(422, "Validation Failed", [_invalid("base")])
            if head_branch == base:
                raise ForgeError(
                    422,
                    "Validation Failed",
                    [_custom(f"No commits between {base} and {head_branch}")],
                )
            for other in repo.pulls.values():
                if other.state == "open" and other.head == head_branch and other.base == base:
                    raise ForgeError(
                        422,
                        "Validation Failed",
                        [_custom(f"A pull request already exists for {repo.owner}:{head_branch}.")],
                    )
            if repo.git.merge_base(base_sha, head_sha) is None:
                raise ForgeError(
                    422,
                    "Validation Failed",
                    [_custom(f"The {head_branch} branch has no history in common with {base}")],
                )
            if repo.git.is_ancestor(head_sha, base_sha):
                raise ForgeError(
                    422,
                    "Validation Failed",
                    [_custom(f"No commits between {base} and {head_branch}")],
                )
            number = max(repo.pulls, default=0) + 1
            pull = Pull(
                number=number,
                id=self.next_id(),
                title=title,
                body=body,
                head=head_branch,
                base=base,
                user=login,
                draft=draft,
                head_sha=head_sha,
                base_sha=base_sha,
            )
            repo.git.set_ref(f"refs/pull/{number}/head", head_sha)
            repo.pulls[number] = pull
            return pull

    def pull(self, repo: Repo, number: int) -> Pull:
        pull = repo.pulls.get(number)
        if pull is None:
            raise not_found()
        return pull

    def tips(self, repo: Repo, pull: Pull) -> tuple[str, str]:
        """The head's and base's commits: live while open, as they were when it closed."""
        if pull.state == "open":
            pull.head_sha = repo.git.branch_sha(pull.head) or pull.head_sha
            pull.base_sha = repo.git.branch_sha(pull.base) or pull.base_sha
        return pull.head_sha, pull.base_sha

    def mergeable(self, repo: Repo, pull: Pull) -> bool | None:
        if pull.state != "open":
            return None
        head_sha, base_sha = self.tips(repo, pull)
        return repo.git.attempt_merge(base_sha, head_sha).tree is not None

    def close_pull(self, repo: Repo, pull: Pull) -> None:
        with self.lock:
            if pull.state == "closed":
                return
            self.tips(repo, pull)
            pull.state = "closed"
            pull.closed_at = pull.updated_at = now()

    def reopen_pull(self, repo: Repo, pull: Pull) -> None:
        with self.lock:
            if pull.merged:
                raise ForgeError(
                    422,
                    "Validation Failed",
                    [
                        _custom(
                            "state cannot be changed. "
                            "The pull request cannot be reopened because it was merged."
                        )
                    ],
                )
            pull.state = "open"
            pull.closed_at = None
            pull.updated_at = now()

    def merge_pull(
        self,
        repo: Repo,
        pull: Pull,
        login: str,
        *,
        sha: str | None = None,
        method: str = "merge",
        title: str | None = None,
        message: str | None = None,
    ) -> str:
        """Merge as GitHub does: a merge commit (or one squashed commit) on the base branch,
        made with git on the bare repository; returns its sha."""
        with self.lock:
            if pull.state != "open":
                raise ForgeError(405, "Pull Request is not mergeable")
            head_sha, base_sha = self.tips(repo, pull)
            if sha is not None and sha != head_sha:
                raise ForgeError(409, "Head branch was modified. Review and try the merge again.")
            if method == "rebase":
                raise ForgeError(405, "Rebase merges are not allowed on this repository.")
            attempt = repo.git.attempt_merge(base_sha, head_sha)
            if attempt.tree is None:
                raise ForgeError(405, "Pull Request is not mergeable")
            if method == "squash":
                subject = title or f"{pull.title} (#{pull.number})"
                parents = [base_sha]
            else:
                subject = (
                    title or f"Merge pull request #{pull.number} from {repo.owner}/{pull.head}"
                )
                parents = [base_sha, head_sha]
            text = subject + "\n\n" + (message if message is not None else pull.title) + "\n"
            merged = repo.git.commit_tree(attempt.tree, parents, text)
            if not repo.git.set_ref(f"refs/heads/{pull.base}", merged, base_sha):
                raise ForgeError(409, "Base branch was modified. Review and try the merge again.")
            pull.state = "closed"
            pull.merged = True
            pull.merged_by = login
            pull.merge_commit_sha = merged
            pull.base_sha = base_sha
            pull.merged_at = pull.closed_at = pull.updated_at = now()
            return merged

    # -- webhooks ------------------------------------------------------------------------

    def add_hook(
        self,
        repo: Repo,
        *,
        url: str,
        content_type: str,
        secret: str | None,
        insecure_ssl: str,
        events: list[str],
        active: bool,
    ) -> Hook:
        with self.lock:
            hook = Hook(
                id=self.next_id(),
                url=url,
                content_type=content_type,
                secret=secret,
                insecure_ssl=insecure_ssl,
                events=events,
                active=active,
            )
            repo.hooks[hook.id] = hook
            return hook


def _custom(message: str) -> dict:
    return {"resource": "PullRequest", "code": "custom", "message": message}


def _invalid(field_name: str) -> dict:
    return {"resource": "PullRequest", "field": field_name, "code": "invalid"}


def _already_exists(field_name: str) -> dict:
    return {
        "resource": "Repository",
        "field": field_name,
        "code": "already_exists",
        "message": "name already exists on this account",
    }
