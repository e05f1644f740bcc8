"""A tenant's repository as Berth reaches it: its URL (shown without credentials), branch
and credentials, the retry policy and commit author from settings, and GitError, whose
messages are redacted before anyone reads them.

A Remote is checked when it is made, with the same rules the forms and the API apply
(tenants.gitrepo): a URL or branch stored before those rules existed, or written around
them, is refused here before git is run with it.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit, urlunsplit

from django.conf import settings

from tenants.gitrepo import RepositoryInputError, branch_problem, parse_repo_url

logger = logging.getLogger(__name__)

REDACTED = "[REDACTED]"
WORK_BRANCH = "berth-work"
_URL_USERINFO = re.compile(r"(\b[A-Za-z][A-Za-z0-9+.-]*://)[^/\s@]+@")
_AUTH_HEADER = re.compile(r"(?i)(authorization:\s*\w+\s+)\S+")


class GitError(Exception):
    """git failed; `message` is what a person should read (credentials already removed)."""

    def __init__(
        self, message: str, *, transient: bool, attempts: int = 1, network: bool = False
    ) -> None:
        super().__init__(message)
        self.message = message
        self.transient = transient
        self.attempts = attempts
        self.network = network  # from talking to the remote, not from the working copy


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """Remove credentials from text: known secret values, URL userinfo, auth headers."""
    for secret in sorted({s for s in secrets if s and len(s) >= 4}, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    text = _URL_USERINFO.sub(rf"\1{REDACTED}@", text)
    return _AUTH_HEADER.sub(rf"\1{REDACTED}", text)


def insecure_allowed() -> bool:
    return bool(getattr(settings, "BERTH_GIT_ALLOW_INSECURE", False))


def transport(url: str) -> str:
    """https (a token; plain http too), ssh (a deploy key), file or git (no credentials).
    Raises GitError for a URL git must not be handed (tenants.gitrepo)."""
    try:
        scheme = parse_repo_url(url, allow_insecure=insecure_allowed()).scheme
    except RepositoryInputError as exc:
        # Not echoed: the URL may be hostile, and may carry a credential.
        raise GitError(f"refusing the GitOps repository URL: {exc}", transient=False) from None
    return "https" if scheme == "http" else scheme


def token_pair(credentials: str) -> tuple[str, str]:
    """An HTTPS credential, `token` or `user:token`, as (user, token); a bare token is sent
    as `x-access-token`, which GitHub, GitLab and Gitea accept with any token."""
    user, sep, token = credentials.strip().partition(":")
    return (user, token) if sep else ("x-access-token", user)


def private_key(credentials: str) -> str:
    key = credentials.replace("\r\n", "\n").strip()
    return key + "\n"  # OpenSSH refuses a key without its final newline


def display_url(url: str) -> str:
    """The URL as people may see it: no user:password@ in it."""
    parts = urlsplit(url.strip())
    if parts.scheme in ("http", "https") and "@" in parts.netloc:
        return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))
    if parts.scheme and "@" in parts.netloc and ":" in parts.netloc.rpartition("@")[0]:
        user, _, host = parts.netloc.rpartition("@")
        return urlunsplit(parts._replace(netloc=f"{user.split(':', 1)[0]}@{host}"))
    return url.strip()


@dataclass(frozen=True)
class Remote:
    """A repository branch and how to authenticate to it. Build it with `Remote.parse`."""

    url: str  # never with credentials in it
    branch: str = "main"
    credentials: str = field(default="", repr=False)

    def __post_init__(self) -> None:
        # However it was made: git is never handed a URL or branch the forms would refuse.
        transport(self.url)
        problem = branch_problem(self.branch)
        if problem:
            raise GitError(f"refusing the GitOps branch: {problem}", transient=False)

    @classmethod
    def parse(cls, url: str, *, branch: str = "main", credentials: str = "") -> Remote:
        """Credentials written into an https URL (user:token@) move out of it."""
        url = url.strip()
        transport(url)  # before anything else reads it
        parts = urlsplit(url)
        if parts.scheme in ("http", "https") and "@" in parts.netloc and not credentials:
            credentials = unquote(parts.netloc.rpartition("@")[0])
        return cls(url=display_url(url), branch=branch or "main", credentials=credentials)

    @property
    def transport(self) -> str:
        return transport(self.url)

    @property
    def lock_name(self) -> str:
        return hashlib.sha256(self.url.encode()).hexdigest()


@dataclass(frozen=True)
class Policy:
    attempts: int = 5
    initial_seconds: float = 1.0
    max_seconds: float = 20.0
    timeout_seconds: float = 60.0
    lock_timeout_seconds: float = 60.0
    max_rebases: int = 10


@dataclass(frozen=True)
class Author:
    name: str = "Berth"
    email: str = "berth@localhost"


def policy_from_settings() -> Policy:
    backoff = float(getattr(settings, "BERTH_GIT_BACKOFF_SECONDS", 1.0))
    return Policy(
        attempts=int(getattr(settings, "BERTH_GIT_MAX_ATTEMPTS", 5)),
        initial_seconds=backoff,
        max_seconds=max(backoff * 20, 1.0),
        timeout_seconds=float(getattr(settings, "BERTH_GIT_TIMEOUT_SECONDS", 60.0)),
        lock_timeout_seconds=float(getattr(settings, "BERTH_GIT_LOCK_TIMEOUT_SECONDS", 60.0)),
    )


def author_from_settings() -> Author:
    return Author(
        name=getattr(settings, "BERTH_GIT_AUTHOR_NAME", "Berth"),
        email=getattr(settings, "BERTH_GIT_AUTHOR_EMAIL", "berth@localhost"),
    )


def state_dir() -> Path:
    """Berth's git state on this host: working copies, lock files, known SSH hosts."""
    path = Path(settings.DATA_DIR) / "gitops"
    path.mkdir(parents=True, exist_ok=True)
    return path
