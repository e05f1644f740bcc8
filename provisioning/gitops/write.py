"""Commits: under the lock, fetch, reset, ask the caller what the files should be, commit
and push; recompute and push again when the branch moved meanwhile. `write_batch` makes
one commit for each of several callers, one after the other on the same checkout, and
pushes them together.
"""

from __future__ import annotations

import logging
import secrets
import tempfile
from collections.abc import Callable, Hashable, Iterable, Iterator
from contextlib import ExitStack, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_exponential_jitter

from provisioning.gitops.checkout import Checkout, checkout, workdir_of
from provisioning.gitops.locks import repo_lock
from provisioning.gitops.remote import (
    Author,
    GitError,
    Policy,
    Remote,
    author_from_settings,
    policy_from_settings,
)
from provisioning.gitops.session import session

logger = logging.getLogger(__name__)


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
    base: str = ""  # write_branch: the remote branch's commit the change was built on


class Skip(Exception):
    """Raised by a proposer of `write_batch` that cannot say now: left out of this push."""


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
    return write_batch(remote, lambda work: [(None, propose)], author=author, policy=policy)[None]


Proposer = Callable[[Checkout], Proposal]


def write_batch(
    remote: Remote,
    batch: Callable[[Checkout], list[tuple[Hashable, Proposer]]],
    *,
    settled: Callable[[dict[Hashable, WriteResult]], None] | None = None,
    author: Author | None = None,
    policy: Policy | None = None,
) -> dict[Hashable, WriteResult]:
    """One commit per proposer that changes something, in the order `batch` gives them,
    each built on the one before, all pushed at once. `batch` runs under the repository
    lock (and again after a refused push) and says who is in this push; a proposer that
    raises Skip is left out. `settled(results)` runs under the lock too, once they are
    final: what it records is there before the next writer looks. Returns each key's
    result ({} when `batch` named nobody). Raises GitError."""
    policy = policy or policy_from_settings()
    author = author or author_from_settings()
    pushes = 0

    def final(results: dict[Hashable, WriteResult]) -> dict[Hashable, WriteResult]:
        for result in results.values():
            result.attempts, result.pushes = attempts, pushes
        if settled is not None:
            settled(results)
        return results

    def once() -> dict[Hashable, WriteResult]:
        nonlocal pushes
        with repo_lock(remote, timeout=policy.lock_timeout_seconds), session(remote, policy) as git:
            path = workdir_of(remote)
            # Optimistic first: build on the tip this host pushed last, and let the push
            # (with a lease on that tip) say whether it still is one. Saves a fetch per
            # commit while one host writes a repository; costs a refused push otherwise.
            fetch = False
            for _ in range(policy.max_rebases):
                work = checkout(git, remote, path, fetch=fetch)
                fetch = True
                proposers = batch(work)
                if not proposers:
                    return {}

                results: dict[Hashable, WriteResult] = {}
                committed: list[Hashable] = []
                for key, propose in proposers:
                    try:
                        proposal = propose(work)
                    except Skip:
                        continue
                    if not proposal.changed:
                        results[key] = WriteResult("unchanged", work.head, proposal)
                        continue
                    work.apply(proposal.current, proposal.files)
                    work.commit(proposal.message, author)
                    results[key] = WriteResult("committed", "", proposal)
                    committed.append(key)
                for key, sha in zip(committed, work.made(), strict=True):
                    results[key].sha = sha
                if not work.commits:
                    if not work.fetched:
                        continue  # "unchanged" is only ever said of what the remote holds
                    return final(results)
                pushes += 1
                if work.push():
                    return final(results)
                logger.info(
                    "GitOps: %s %s moved while writing; starting again", remote.url, remote.branch
                )
            raise GitError(
                f"{remote.branch} kept moving: {policy.max_rebases} pushes were refused",
                transient=True,
            )

    attempts = 0
    try:
        for attempt in _retrying(policy):
            with attempt:
                attempts = attempt.retry_state.attempt_number
                results = once()
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
    return results


def write_branch(
    remote: Remote,
    branch: str,
    propose: Proposer,
    *,
    author: Author | None = None,
    policy: Policy | None = None,
) -> WriteResult:
    """One commit with what `propose` says, built on the remote branch as it is now and
    force-pushed to `branch`: Berth's own branch of a pull request, rendered afresh each
    time (a base that moved is a new render, never a merge). None when the remote branch
    already holds the files ("unchanged"). Raises GitError."""
    policy = policy or policy_from_settings()
    author = author or author_from_settings()

    def once() -> WriteResult:
        with repo_lock(remote, timeout=policy.lock_timeout_seconds), session(remote, policy) as git:
            work = checkout(git, remote, workdir_of(remote), fetch=True)
            proposal = propose(work)
            if not proposal.changed:
                return WriteResult("unchanged", work.head, proposal, base=work.head)
            work.apply(proposal.current, proposal.files)
            work.commit(proposal.message, author)
            (sha,) = work.made()
            work.push_branch(branch)
            return WriteResult("committed", sha, proposal, pushes=1, base=work.head)

    for attempt in _retrying(policy):
        with attempt:
            result = once()
            result.attempts = attempt.retry_state.attempt_number
    return result


def _retrying(policy: Policy) -> Retrying:
    """Tries again, after a growing jittered pause, on a transient GitError only."""
    return Retrying(
        retry=retry_if_exception(lambda exc: isinstance(exc, GitError) and exc.transient),
        stop=stop_after_attempt(max(policy.attempts, 1)),
        wait=wait_exponential_jitter(
            multiplier=policy.initial_seconds, max=policy.max_seconds, jitter=policy.initial_seconds
        ),
        reraise=True,
    )


# Inside `one_fetch_per_branch`: the checkouts read so far, and what closes them.
_shared_reads: ContextVar[tuple[ExitStack, dict] | None] = ContextVar(
    "berth_shared_reads", default=None
)


@contextmanager
def one_fetch_per_branch() -> Iterator[None]:
    """Within it, `read_files` fetches each remote branch once and reads every later
    question from that checkout: a page previewing many requests of one tenant (the
    approval queue) reads its repository once, not once per request."""
    if _shared_reads.get() is not None:
        yield
        return
    with ExitStack() as stack:
        token = _shared_reads.set((stack, {}))
        try:
            yield
        finally:
            _shared_reads.reset(token)


@contextmanager
def _fetched(remote: Remote, policy: Policy) -> Iterator[Checkout | None]:
    """A shallow fetch of the branch in a temporary directory (None: no such branch)."""
    with session(remote, policy) as git, tempfile.TemporaryDirectory(prefix="berth-read-") as tmp:
        path = Path(tmp)
        git.run("init", "--quiet", cwd=path)
        git.run("remote", "add", "--", "origin", remote.url, cwd=path)
        if not git.fetch_branch("--depth", "1", refspec=f"refs/heads/{remote.branch}", cwd=path):
            yield None
            return
        git.run("checkout", "--quiet", "--force", "FETCH_HEAD", "--", cwd=path)
        head = git.run("rev-parse", "HEAD", cwd=path).stdout.strip()
        yield Checkout(git, path, remote, head)


def read_files(
    remote: Remote, within: Iterable[str], *, policy: Policy | None = None
) -> dict[str, str]:
    """What the remote branch holds under these directories now (for a plan preview).
    Reads a shallow fetch in a temporary directory (shared within `one_fetch_per_branch`);
    needs no lock."""
    policy = policy or policy_from_settings()
    shared = _shared_reads.get()
    if shared is None:
        with _fetched(remote, policy) as fetched:
            return fetched.read(within) if fetched else {}
    stack, checkouts = shared
    key = (remote.url, remote.branch, remote.credentials)
    if key not in checkouts:
        checkouts[key] = stack.enter_context(_fetched(remote, policy))
    return checkouts[key].read(within) if checkouts[key] else {}


def read_snapshot(
    remote: Remote, within: Iterable[str], *, policy: Policy | None = None
) -> tuple[str, dict[str, str]]:
    """The commit the branch points at ("" when it has none yet) and what it holds under
    these directories (a shallow fetch; no lock)."""
    policy = policy or policy_from_settings()
    with _fetched(remote, policy) as fetched:
        return (fetched.head, fetched.read(within)) if fetched else ("", {})


def probe(remote: Remote, *, policy: Policy | None = None) -> str:
    """`git ls-remote` of the branch with the remote's credentials: the commit it points at,
    "" when the repository answers but has no such branch yet. Raises GitError (unreachable,
    credentials refused, no such repository), whose message says which."""
    policy = policy or policy_from_settings()
    with session(remote, policy) as git, tempfile.TemporaryDirectory(prefix="berth-probe-") as tmp:
        # After `--`: the URL is the repository, never an option (--upload-pack=...).
        listed = git.run(
            "ls-remote",
            "--heads",
            "--",
            remote.url,
            f"refs/heads/{remote.branch}",
            cwd=Path(tmp),
            network=True,
        )
    first = listed.stdout.split()
    return first[0] if first else ""


# Where the write check puts its throwaway commit: outside refs/heads and refs/tags, so no
# branch protection, CI pipeline or webhook of the forge takes it for a push of work.
WRITE_CHECK_REFS = "refs/berth/write-check"


def probe_write(remote: Remote, *, policy: Policy | None = None) -> None:
    """Prove the remote's credentials may push: an empty commit pushed to a throwaway ref,
    deleted again at once. Raises GitError (unreachable, refused: a read-only credential, a
    repository that takes no pushes), whose message says which."""
    policy = policy or policy_from_settings()
    ref = f"{WRITE_CHECK_REFS}/{secrets.token_hex(8)}"
    with session(remote, policy) as git, tempfile.TemporaryDirectory(prefix="berth-probe-") as tmp:
        path = Path(tmp)
        git.run("init", "--quiet", "--bare", cwd=path)
        tree = git.run("hash-object", "-t", "tree", "-w", "--stdin", input="", cwd=path)
        author = author_from_settings()
        identity = {
            f"GIT_{who}_{what}": value
            for who in ("AUTHOR", "COMMITTER")
            for what, value in (("NAME", author.name), ("EMAIL", author.email))
        }
        commit = git.run(
            "commit-tree",
            "-m",
            "Berth checks that it may push here",
            tree.stdout.strip(),
            cwd=path,
            env=identity,
        )
        # After `--`: the URL is the repository, never an option.
        git.run(
            "push",
            "--quiet",
            "--",
            remote.url,
            f"{commit.stdout.strip()}:{ref}",
            cwd=path,
            network=True,
        )
        git.run("push", "--quiet", "--", remote.url, f":{ref}", cwd=path, network=True)
