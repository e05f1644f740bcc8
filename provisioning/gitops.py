"""Writing tenants' GitOps repositories with the git command line. I/O and nothing else.

`write(remote, propose)` makes one commit on the remote branch, or none when nothing
changes. Under a per-repository lock it fetches the branch, resets a working copy to it,
asks `propose(checkout)` what the files should be (the caller renders them purely, from
`provisioning.gitops_plan`), commits and pushes. If the push is refused because the branch
moved (someone outside Berth pushed), it resets to the new remote state and asks again: the
file set is recomputed, never merged, so nothing is lost and nothing conflicts.

The lock works across worker processes: a PostgreSQL advisory lock when the database is
PostgreSQL (every worker on every host shares it; a dead worker's lock goes with its
session), else an flock(2) on a file in the data directory (SQLite means a single host).

Transient failures (the remote unreachable, timeouts, the lock not free in time) are
retried with exponential backoff and jitter (`BERTH_GIT_MAX_ATTEMPTS`,
`BERTH_GIT_BACKOFF_SECONDS`); anything else (authentication, a missing repository, a hook
refusing the push) fails at once with git's own message.

Credentials never appear in a command line, a URL, a log line or an error message: an
HTTPS token travels as an `http.<url>.extraHeader` passed in the environment
(GIT_CONFIG_COUNT/KEY/VALUE), an SSH deploy key is a 0600 file in a private temporary
directory (`GIT_SSH_COMMAND=ssh -i ...`) removed afterwards, and git's output is redacted
before anyone reads it.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import hashlib
import logging
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit, urlunsplit

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_exponential_jitter

logger = logging.getLogger(__name__)

REDACTED = "[REDACTED]"
WORK_BRANCH = "berth-work"
_SCP_LIKE = re.compile(r"^(?:[^@/\s:]+@)?[^@/\s:]+:(?!//).+$")
_URL_USERINFO = re.compile(r"(\b[A-Za-z][A-Za-z0-9+.-]*://)[^/\s@]+@")
_AUTH_HEADER = re.compile(r"(?i)(authorization:\s*\w+\s+)\S+")
# git's words for "the branch moved since you fetched it": reset, recompute, push again.
_MOVED = re.compile(
    r"\[rejected\]|non-fast-forward|fetch first|stale info|failed to update ref|cannot lock ref"
)
_AUTH_REFUSED = re.compile(
    r"(?i)could not read username|authentication failed|returned error: 40[13]"
    r"|permission denied \(publickey"
)
# Failures that retrying will not fix.
_PERMANENT = re.compile(
    r"(?i)authentication failed|could not read (username|password)|terminal prompts disabled"
    r"|permission denied|returned error: (401|403|404)|repository not found|not found"
    r"|does not appear to be a git repository|access denied|not exported"
    r"|host key verification failed|hook declined|protected branch|unsupported"
)


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


def transport(url: str) -> str:
    """https (a token), ssh (a deploy key), file or git (no credentials)."""
    scheme = urlsplit(url).scheme.lower()
    if scheme in ("http", "https"):
        return "https"
    if scheme in ("ssh", "git+ssh", "ssh+git"):
        return "ssh"
    if scheme in ("file", "git"):
        return scheme
    if _SCP_LIKE.match(url):
        return "ssh"
    raise GitError(
        f"unsupported GitOps repository URL {redact(url)!r}: use https://, ssh://, "
        "git@host:path or file://",
        transient=False,
    )


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

    @classmethod
    def parse(cls, url: str, *, branch: str = "main", credentials: str = "") -> Remote:
        """Credentials written into an https URL (user:token@) move out of it."""
        url = url.strip()
        parts = urlsplit(url)
        if parts.scheme in ("http", "https") and "@" in parts.netloc and not credentials:
            credentials = unquote(parts.netloc.rpartition("@")[0])
        remote = cls(url=display_url(url), branch=branch or "main", credentials=credentials)
        transport(remote.url)  # refuses what git would not be given
        return remote

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


# --- running git ---------------------------------------------------------------------------


class Git:
    """git with one remote's credentials in its environment; every message redacted."""

    def __init__(self, env: dict[str, str], secrets: list[str], timeout: float) -> None:
        self.env = env
        self.secrets = secrets
        self.timeout = timeout

    def run(
        self,
        *args: str,
        cwd: Path,
        input: str | None = None,  # noqa: A002 - subprocess's name
        check: bool = True,
        network: bool = False,
        env: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        try:
            proc = subprocess.run(  # noqa: S603 - fixed argv, no shell
                ["git", *args],  # noqa: S607 - git from PATH, like the operator's own
                cwd=cwd,
                env={**self.env, **(env or {})},
                input=input,
                capture_output=True,
                text=True,
                encoding="utf-8",
                errors="replace",
                timeout=self.timeout,
            )
        except subprocess.TimeoutExpired:
            raise GitError(
                f"git {args[0]} timed out after {self.timeout:.0f}s", transient=True
            ) from None
        if check and proc.returncode != 0:
            raise self.error(args[0], proc, network=network)
        return proc

    def error(
        self, command: str, proc: subprocess.CompletedProcess[str], *, network: bool
    ) -> GitError:
        text = redact((proc.stderr or proc.stdout or "").strip(), self.secrets)
        text = " ".join(line.strip() for line in text.splitlines() if line.strip())
        transient = network and not _PERMANENT.search(text)
        if network and _AUTH_REFUSED.search(text):
            text += " (the repository refused the credentials Berth has for it, or wants some:"
            text += " check the tenant's GitOps credentials)"
        return GitError(
            f"git {command} failed: {text or f'exit {proc.returncode}'}",
            transient=transient,
            network=network,
        )


def _token_header(credentials: str) -> tuple[str, list[str]]:
    """`token` or `username:token` → an HTTP Basic Authorization header value."""
    user, sep, token = credentials.strip().partition(":")
    if not sep:
        user, token = "x-access-token", user
    encoded = base64.b64encode(f"{user}:{token}".encode()).decode()
    return f"Authorization: Basic {encoded}", [token, encoded, credentials.strip()]


def _private_key(credentials: str) -> str:
    key = credentials.replace("\r\n", "\n").strip()
    return key + "\n"  # OpenSSH refuses a key without its final newline


@contextlib.contextmanager
def session(remote: Remote, policy: Policy) -> Iterator[Git]:
    """A git environment for `remote`, its credentials in it, gone afterwards."""
    base = state_dir()
    home = base / "home"
    home.mkdir(exist_ok=True)
    private = Path(tempfile.mkdtemp(prefix="berth-git-"))  # 0700
    try:
        env = {
            key: os.environ[key]
            for key in (
                "PATH",
                "TMPDIR",
                "SSL_CERT_FILE",
                "SSL_CERT_DIR",
                "HTTPS_PROXY",
                "HTTP_PROXY",
                "NO_PROXY",
                "https_proxy",
                "http_proxy",
                "no_proxy",
            )
            if key in os.environ
        }
        env.update(
            HOME=str(home),
            LC_ALL="C",
            GIT_TERMINAL_PROMPT="0",
            GIT_ASKPASS="",
            SSH_ASKPASS="",
            GCM_INTERACTIVE="never",
            GIT_CONFIG_NOSYSTEM="1",
            GIT_CONFIG_GLOBAL=os.devnull,
        )
        config = [
            ("credential.helper", ""),
            ("gc.auto", "0"),
            ("init.defaultBranch", "main"),
            ("advice.detachedHead", "false"),
            ("commit.gpgSign", "false"),
        ]
        secrets: list[str] = []
        kind = remote.transport
        if kind == "https":
            config += [
                ("http.lowSpeedLimit", "1000"),
                ("http.lowSpeedTime", str(max(int(policy.timeout_seconds), 1))),
            ]
            if remote.credentials:
                header, values = _token_header(remote.credentials)
                config.append((f"http.{remote.url}.extraHeader", header))
                secrets += values
        elif kind == "ssh":
            ssh = ["ssh"]
            if remote.credentials:
                key_file = private / "deploy-key"
                fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "w") as handle:
                    handle.write(_private_key(remote.credentials))
                ssh += ["-i", str(key_file), "-o", "IdentitiesOnly=yes"]
                secrets += [
                    line.strip()
                    for line in remote.credentials.splitlines()
                    if len(line.strip()) >= 16 and not line.startswith("-----")
                ]
            ssh += [
                "-o",
                "BatchMode=yes",
                "-o",
                "StrictHostKeyChecking=accept-new",
                "-o",
                f"UserKnownHostsFile={base / 'known_hosts'}",
                "-o",
                f"ConnectTimeout={max(int(policy.timeout_seconds), 1)}",
            ]
            env["GIT_SSH_COMMAND"] = shlex.join(ssh)
            env["GIT_SSH_VARIANT"] = "ssh"
        env["GIT_CONFIG_COUNT"] = str(len(config))
        for index, (key, value) in enumerate(config):
            env[f"GIT_CONFIG_KEY_{index}"] = key
            env[f"GIT_CONFIG_VALUE_{index}"] = value
        yield Git(env, secrets, policy.timeout_seconds)
    finally:
        shutil.rmtree(private, ignore_errors=True)


# --- the per-repository lock ---------------------------------------------------------------


@contextlib.contextmanager
def repo_lock(remote: Remote, *, timeout: float) -> Iterator[None]:
    """Only one writer per repository at a time, across processes (and hosts on PostgreSQL)."""
    if connection.vendor == "postgresql":
        with _advisory_lock(remote.lock_name, timeout):
            yield
    else:
        with _file_lock(remote.lock_name, timeout):
            yield


@contextlib.contextmanager
def _advisory_lock(name: str, timeout: float) -> Iterator[None]:
    key = int.from_bytes(hashlib.sha256(f"berth-gitops:{name}".encode()).digest()[:8], "big")
    key -= 2**63 if key >= 2**63 else 0  # bigint
    try:
        # A savepoint when the caller is in a transaction, so a timeout spoils nothing.
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(
                "SELECT set_config('lock_timeout', %s, true)", [f"{int(timeout * 1000)}ms"]
            )
            cursor.execute("SELECT pg_advisory_lock(%s)", [key])
    except DatabaseError as exc:
        raise GitError(
            f"another worker kept this repository locked for more than {timeout:.0f}s",
            transient=True,
        ) from exc
    try:
        yield
    finally:
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s)", [key])
        except DatabaseError:  # the session is gone, and its lock with it
            logger.warning("GitOps: could not release the repository lock; its session ended")


@contextlib.contextmanager
def _file_lock(name: str, timeout: float) -> Iterator[None]:
    directory = state_dir() / "locks"
    directory.mkdir(exist_ok=True)
    fd = os.open(directory / f"{name[:32]}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        deadline = time.monotonic() + timeout
        delay = 0.002
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise GitError(
                        f"another worker kept this repository locked for more than {timeout:.0f}s",
                        transient=True,
                    ) from None
                time.sleep(delay)
                delay = min(delay * 2, 0.05)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


# --- a working copy reset to the remote branch -----------------------------------------------


class Checkout:
    """The remote branch as just fetched, in a working copy only this writer uses now."""

    def __init__(
        self, git: Git, path: Path, remote: Remote, head: str, *, fetched: bool = True
    ) -> None:
        self.git = git
        self.path = path
        self.remote = remote
        self.head = head  # "" while the branch does not exist yet
        # False: built on the tip this host last saw (its own last push), not re-fetched.
        self.fetched = fetched

    def read(self, within: Iterable[str]) -> dict[str, str]:
        """Every tracked file under these directories, path → text. Symbolic links are
        reported as opaque content: never followed, never written through."""
        within = list(within)
        if not within or not self.head:
            return {}
        listed = self.git.run("--literal-pathspecs", "ls-files", "-z", "--", *within, cwd=self.path)
        files = {}
        for path in filter(None, listed.stdout.split("\0")):
            full = self.path / path
            if full.is_symlink() or not full.is_file():
                files[path] = f"<not a regular file: {path}>\n"
            else:
                files[path] = full.read_bytes().decode("utf-8", "surrogateescape")
        return files

    def _target(self, path: str) -> Path:
        parts = Path(path).parts
        if Path(path).is_absolute() or ".." in parts or ".git" in parts:
            raise GitError(f"refusing to write {path!r}: outside the repository", transient=False)
        here = self.path
        for part in parts:
            here = here / part
            if here.is_symlink():
                raise GitError(
                    f"refusing to write {path!r}: {here.relative_to(self.path)} is a symbolic link",
                    transient=False,
                )
        return here

    def apply(self, current: dict[str, str], files: dict[str, str]) -> list[str]:
        changed: list[str] = []
        path = ""
        try:
            for path in sorted(set(current) - set(files)):
                self._target(path).unlink(missing_ok=True)
                changed.append(path)
            for path, content in sorted(files.items()):
                if current.get(path) != content:
                    target = self._target(path)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(content.encode("utf-8", "surrogateescape"))
                    changed.append(path)
        except OSError as exc:  # e.g. the team made a directory where Berth writes a file
            raise GitError(
                f"cannot write {path} in the repository: {exc.strerror}", transient=False
            ) from exc
        self.git.run(
            "--literal-pathspecs",
            "add",
            "--all",
            "--pathspec-from-file=-",
            "--pathspec-file-nul",
            cwd=self.path,
            input="\0".join(changed),
        )
        return changed

    def commit(self, message: str, author: Author) -> str:
        identity = {
            "GIT_AUTHOR_NAME": author.name,
            "GIT_AUTHOR_EMAIL": author.email,
            "GIT_COMMITTER_NAME": author.name,
            "GIT_COMMITTER_EMAIL": author.email,
        }
        self.git.run(
            "commit",
            "--quiet",
            "--no-verify",
            "--cleanup=verbatim",
            "-F",
            "-",
            cwd=self.path,
            input=message,
            env=identity,
        )
        return self.git.run("rev-parse", "HEAD", cwd=self.path).stdout.strip()

    def push(self) -> bool:
        """True when pushed; False when the branch is not where this commit was built on
        any more (someone pushed, or rewound it): fetch, reset and try again."""
        branch = f"refs/heads/{self.remote.branch}"
        proc = self.git.run(
            "push",
            "--porcelain",
            # Accepted only if the remote branch is exactly what we built on.
            f"--force-with-lease={branch}:{self.head}",
            "origin",
            f"HEAD:{branch}",
            cwd=self.path,
            check=False,
            network=True,
        )
        if proc.returncode == 0:
            tracking = f"refs/remotes/origin/{self.remote.branch}"
            self.git.run("update-ref", tracking, "HEAD", cwd=self.path)
            return True
        if _MOVED.search(f"{proc.stdout}\n{proc.stderr}"):
            return False
        raise self.git.error("push", proc, network=True)

    def find_commit(self, request_id: int) -> tuple[str, str, dict[str, str]] | None:
        """The commit on the branch that carries `Berth-Request: <id>`: sha, diff, files."""
        if not self.head:
            return None
        found = self.git.run(
            "log",
            "-n",
            "2000",
            "-E",
            f"--grep=^Berth-Request: {request_id}$",
            "--format=%H",
            self.head,
            cwd=self.path,
        ).stdout.split()
        if not found:
            return None
        diff = self.git.run("show", "--format=", "--no-color", found[0], cwd=self.path).stdout
        listed = self.git.run(
            "show", "--format=", "--name-status", "--no-renames", found[0], cwd=self.path
        ).stdout
        words = {"A": "added", "M": "modified", "D": "deleted"}
        files = {
            path: words.get(status[:1], "modified")
            for status, _, path in (line.partition("\t") for line in listed.splitlines())
            if path
        }
        return found[0], diff, files


def _workdir(remote: Remote) -> Path:
    digest = hashlib.sha256(f"{remote.url}\n{remote.branch}".encode()).hexdigest()[:20]
    return state_dir() / "work" / digest


def checkout(git: Git, remote: Remote, path: Path, *, fetch: bool = True) -> Checkout:
    """Reset the working copy to the remote branch (nothing local survives): fetched, or
    with `fetch=False` as this host last saw it, when it has seen it (the push then
    finds out whether that is still the tip)."""
    try:
        if not (path / ".git").is_dir():
            shutil.rmtree(path, ignore_errors=True)
            path.mkdir(parents=True)
            git.run("init", "--quiet", cwd=path)
            git.run("remote", "add", "origin", remote.url, cwd=path)
        else:  # a worker killed mid-write may have left git's own lock files behind
            for stale in ("index.lock", "HEAD.lock", f"refs/heads/{WORK_BRANCH}.lock"):
                (path / ".git" / stale).unlink(missing_ok=True)
        tracking = f"refs/remotes/origin/{remote.branch}"
        if not fetch:
            known = git.run("rev-parse", "--verify", "--quiet", tracking, cwd=path, check=False)
            if known.returncode == 0:
                git.run("checkout", "--quiet", "--force", "-B", WORK_BRANCH, tracking, cwd=path)
                git.run("clean", "--quiet", "-ffdx", cwd=path)
                return Checkout(git, path, remote, known.stdout.strip(), fetched=False)
        fetched = git.run(
            "fetch",
            "--quiet",
            "--no-tags",
            "origin",
            f"+refs/heads/{remote.branch}:{tracking}",
            cwd=path,
            check=False,
            network=True,
        )
        if fetched.returncode != 0:
            if "couldn't find remote ref" not in fetched.stderr:
                raise git.error("fetch", fetched, network=True)
            # An empty repository, or a branch not there yet: the first commit makes it.
            git.run("update-ref", "-d", tracking, cwd=path, check=False)
            git.run("symbolic-ref", "HEAD", f"refs/heads/{WORK_BRANCH}", cwd=path)
            git.run("update-ref", "-d", f"refs/heads/{WORK_BRANCH}", cwd=path, check=False)
            git.run("read-tree", "--empty", cwd=path)
            head = ""
        else:
            git.run("checkout", "--quiet", "--force", "-B", WORK_BRANCH, tracking, cwd=path)
            head = git.run("rev-parse", "HEAD", cwd=path).stdout.strip()
        git.run("clean", "--quiet", "-ffdx", cwd=path)
    except GitError as error:
        if error.network:
            raise
        # A broken working copy (a killed worker, a full disk) is rebuilt on the next try.
        shutil.rmtree(path, ignore_errors=True)
        raise GitError(error.message, transient=True) from error
    return Checkout(git, path, remote, head)


# --- one commit ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Proposal:
    """What the files under the write's directories should be, and the commit message."""

    current: dict[str, str]
    files: dict[str, str]
    message: str

    @property
    def changed(self) -> bool:
        return self.current != self.files


@dataclass
class WriteResult:
    outcome: str  # committed | unchanged
    sha: str
    proposal: Proposal
    attempts: int = 1  # tries, transient failures included
    pushes: int = 0  # pushes tried, refused ones included


def write(
    remote: Remote,
    propose: Callable[[Checkout], Proposal],
    *,
    author: Author | None = None,
    policy: Policy | None = None,
) -> WriteResult:
    """One commit with what `propose` says, pushed to the remote branch; none if unchanged.

    `propose` runs under the repository lock on a fresh checkout of the branch, and again
    after a refused push, so whatever it reads (the database included) is as new as the
    last commit any Berth worker made. Raises GitError.
    """
    policy = policy or policy_from_settings()
    author = author or author_from_settings()
    pushes = 0

    def once() -> WriteResult:
        nonlocal pushes
        with repo_lock(remote, timeout=policy.lock_timeout_seconds), session(remote, policy) as git:
            path = _workdir(remote)
            # Optimistic first: build on the tip this host pushed last, and let the push
            # (with a lease on that tip) say whether it still is one. Saves a fetch per
            # commit while one host writes a repository; costs a refused push otherwise.
            fetch = False
            for _ in range(policy.max_rebases):
                work = checkout(git, remote, path, fetch=fetch)
                fetch = True
                proposal = propose(work)
                if not proposal.changed:
                    if not work.fetched:
                        continue  # "unchanged" is only ever said of what the remote holds
                    return WriteResult("unchanged", work.head, proposal)
                work.apply(proposal.current, proposal.files)
                sha = work.commit(proposal.message, author)
                pushes += 1
                if work.push():
                    return WriteResult("committed", sha, proposal)
                logger.info(
                    "GitOps: %s %s moved while writing; starting again", remote.url, remote.branch
                )
            raise GitError(
                f"{remote.branch} kept moving: {policy.max_rebases} pushes were refused",
                transient=True,
            )

    attempts = 0
    retrying = Retrying(
        retry=retry_if_exception(lambda exc: isinstance(exc, GitError) and exc.transient),
        stop=stop_after_attempt(max(policy.attempts, 1)),
        wait=wait_exponential_jitter(
            multiplier=policy.initial_seconds, max=policy.max_seconds, jitter=policy.initial_seconds
        ),
        reraise=True,
    )
    try:
        for attempt in retrying:
            with attempt:
                attempts = attempt.retry_state.attempt_number
                result = once()
    except GitError as error:
        error.attempts = attempts
        logger.warning(
            "GitOps: writing %s %s failed after %d attempt(s): %s",
            remote.url,
            remote.branch,
            attempts,
            error.message,
        )
        raise
    result.attempts, result.pushes = attempts, pushes
    return result


def read_files(
    remote: Remote, within: Iterable[str], *, policy: Policy | None = None
) -> dict[str, str]:
    """What the remote branch holds under these directories now (for a plan preview).
    Reads a shallow fetch in a temporary directory; needs no lock."""
    policy = policy or policy_from_settings()
    with session(remote, policy) as git, tempfile.TemporaryDirectory(prefix="berth-read-") as tmp:
        path = Path(tmp)
        git.run("init", "--quiet", cwd=path)
        git.run("remote", "add", "origin", remote.url, cwd=path)
        fetched = git.run(
            "fetch",
            "--quiet",
            "--depth",
            "1",
            "--no-tags",
            "origin",
            f"refs/heads/{remote.branch}",
            cwd=path,
            check=False,
            network=True,
        )
        if fetched.returncode != 0:
            if "couldn't find remote ref" in fetched.stderr:
                return {}
            raise git.error("fetch", fetched, network=True)
        git.run("checkout", "--quiet", "--force", "FETCH_HEAD", cwd=path)
        head = git.run("rev-parse", "HEAD", cwd=path).stdout.strip()
        return Checkout(git, path, remote, head).read(within)
