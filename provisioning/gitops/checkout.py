"""A working copy reset to the remote branch: read files under paths, commit, push, and
find a request's commit by its trailer.
"""

from __future__ import annotations

import hashlib
import io
import re
import shutil
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from provisioning.gitops.remote import WORK_BRANCH, Author, GitError, Remote, state_dir
from provisioning.gitops.session import Git

# git's words for "the branch moved since you fetched it": reset, recompute, push again.
_MOVED = re.compile(
    r"\[rejected\]|non-fast-forward|fetch first|stale info|failed to update ref|cannot lock ref"
)
# In a working copy's .git: "this working copy is exactly the commit named here, which this
# host pushed last". Written after a push, removed before anything else touches the copy, so
# the next writer under the lock can build on it without resetting it (three git processes).
_SETTLED = "berth-settled"


@dataclass(frozen=True)
class _Commit:
    """A commit made here and not yet written into the repository (see `made`)."""

    message: str
    author: Author
    when: int
    changes: dict[str, tuple[str, bytes] | None]  # path -> (mode, content), or deleted


class Checkout:
    """The remote branch as just fetched, in a working copy only this writer uses now.

    Commits are made in memory: the files go into the working copy (what the next proposal
    reads) and `made` writes every commit into the repository with one `git fast-import`,
    so a push of many commits costs a few git processes, not three per commit."""

    def __init__(
        self, git: Git, path: Path, remote: Remote, head: str, *, fetched: bool = True
    ) -> None:
        self.git = git
        self.path = path
        self.remote = remote
        self.head = head  # what the push must find on the remote; "" while no branch yet
        # False: built on the tip this host last saw (its own last push), not re-fetched.
        self.fetched = fetched
        self.commits = 0  # made on top of `head`, not pushed yet
        self.tip = head  # the last commit made here
        self._tracked: set[str] | None = None  # what `head` and the commits since hold
        self._staged: dict[str, tuple[str, bytes] | None] = {}
        self._unwritten: list[_Commit] = []

    def _files(self) -> set[str]:
        if self._tracked is None:
            listed = self.git.run("ls-files", "-z", cwd=self.path) if self.head else None
            self._tracked = set(filter(None, listed.stdout.split("\0"))) if listed else set()
        return self._tracked

    def read(self, within: Iterable[str]) -> dict[str, str]:
        """Every tracked file under these directories (or these files), path → text.
        Symbolic links are reported as opaque content: never followed, never written
        through."""
        prefixes = tuple(f"{place.rstrip('/')}/" for place in within)
        if not prefixes:
            return {}
        files = {}
        for path in sorted(self._files()):
            if not f"{path}/".startswith(prefixes) and not path.startswith(prefixes):
                continue
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
        """Make the files under the write's directories what `files` says (`current`: what
        they are now), for the next commit. Returns the paths changed."""
        changed: list[str] = []
        tracked = self._files()
        path = ""
        try:
            for path in sorted(set(current) - set(files)):
                self._target(path).unlink(missing_ok=True)
                self._staged[path] = None
                tracked.discard(path)
                changed.append(path)
            for path, content in sorted(files.items()):
                if current.get(path) != content:
                    target = self._target(path)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    data = content.encode("utf-8", "surrogateescape")
                    target.write_bytes(data)
                    # A file the team made executable stays so, as `git add` would keep it.
                    mode = "100755" if target.stat().st_mode & 0o111 else "100644"
                    self._staged[path] = (mode, data)
                    tracked.add(path)
                    changed.append(path)
        except OSError as exc:  # e.g. the team made a directory where Berth writes a file
            raise GitError(
                f"cannot write {path} in the repository: {exc.strerror}", transient=False
            ) from exc
        return changed

    def commit(self, message: str, author: Author) -> None:
        """What `apply` staged, as one commit with this message (kept verbatim)."""
        self._unwritten.append(_Commit(message, author, int(time.time()), self._staged))
        self._staged = {}
        self.commits += 1

    def made(self) -> list[str]:
        """The commits made here on top of `head`, oldest first: written into the repository
        now, all with one `git fast-import`, and the working copy's index brought to them."""
        if not self._unwritten:
            return []
        stream = io.BytesIO()
        for mark, made in enumerate(self._unwritten, start=1):
            who = f"{made.author.name} <{made.author.email}> {made.when} +0000"
            message = made.message.encode()
            stream.write(f"commit refs/heads/{WORK_BRANCH}\nmark :{mark}\n".encode())
            stream.write(f"author {who}\ncommitter {who}\n".encode())
            stream.write(b"data %d\n%s\n" % (len(message), message))
            if mark == 1 and self.tip:
                stream.write(f"from {self.tip}\n".encode())
            for path, change in made.changes.items():
                if change is None:
                    stream.write(b"D %s\n" % _quoted(path))
                else:
                    mode, data = change
                    stream.write(
                        b"M %s inline %s\ndata %d\n%s\n"
                        % (mode.encode(), _quoted(path), len(data), data)
                    )
        stream.write(b"done\n")
        marks = self.path / ".git" / "berth-marks"
        self.git.run(
            "fast-import",
            "--quiet",
            "--done",
            f"--export-marks={marks}",
            cwd=self.path,
            input=stream.getvalue(),
        )
        by_mark = dict(line.split() for line in marks.read_text().splitlines())
        made = [by_mark[f":{mark}"] for mark in range(1, len(self._unwritten) + 1)]
        # HEAD names the work branch, which fast-import moved; the index follows it.
        self.git.run("reset", "--quiet", cwd=self.path)
        self._unwritten.clear()
        self.tip = made[-1]
        return made

    def push(self) -> bool:
        """True when pushed; False when the branch is not where this commit was built on
        any more (someone pushed, or rewound it): fetch, reset and try again."""
        branch = f"refs/heads/{self.remote.branch}"
        proc = self.git.run(
            "push",
            "--porcelain",
            # Accepted only if the remote branch is exactly what we built on.
            f"--force-with-lease={branch}:{self.head}",
            "--",  # the configured remote's name: its URL never is on a command line
            "origin",
            f"HEAD:{branch}",
            cwd=self.path,
            check=False,
            network=True,
        )
        if proc.returncode == 0:
            # git moved refs/remotes/origin/<branch> itself (origin's fetch refspec maps it).
            (self.path / ".git" / _SETTLED).write_text(self.tip)
            return True
        if _MOVED.search(f"{proc.stdout}\n{proc.stderr}"):
            return False
        raise self.git.error("push", proc, network=True)

    def push_branch(self, branch: str) -> None:
        """Force-push what was made here to another branch, Berth's own (a pull request's
        head): whatever it held is replaced. The working copy stays a copy of the remote
        branch it was checked out from, which this push leaves alone."""
        self.git.run(
            "push",
            "--porcelain",
            "--force",
            "--",
            "origin",
            f"HEAD:refs/heads/{branch}",
            cwd=self.path,
            network=True,
        )

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
            "--",
            cwd=self.path,
        ).stdout.split()
        if not found:
            return None
        diff = self.git.run("show", "--format=", "--no-color", found[0], "--", cwd=self.path).stdout
        listed = self.git.run(
            "show", "--format=", "--name-status", "--no-renames", found[0], "--", cwd=self.path
        ).stdout
        words = {"A": "added", "M": "modified", "D": "deleted"}
        files = {
            path: words.get(status[:1], "modified")
            for status, _, path in (line.partition("\t") for line in listed.splitlines())
            if path
        }
        return found[0], diff, files


def workdir_of(remote: Remote) -> Path:
    digest = hashlib.sha256(f"{remote.url}\n{remote.branch}".encode()).hexdigest()[:20]
    return state_dir() / "work" / digest


def checkout(git: Git, remote: Remote, path: Path, *, fetch: bool = True) -> Checkout:
    """Reset the working copy to the remote branch (nothing local survives): fetched, or
    with `fetch=False` as this host last saw it, when it has seen it (the push then
    finds out whether that is still the tip). With `fetch=False` right after this host's
    own push, the copy is already that commit and is used as it is."""
    settled = path / ".git" / _SETTLED
    if not fetch and settled.is_file():
        tip = settled.read_text().strip()
        settled.unlink()
        if tip:
            return Checkout(git, path, remote, tip, fetched=False)
    settled.unlink(missing_ok=True)
    try:
        if not (path / ".git").is_dir():
            shutil.rmtree(path, ignore_errors=True)
            path.mkdir(parents=True)
            git.run("init", "--quiet", cwd=path)
            # After `--`: a URL is never read as an option (Remote refused such URLs anyway).
            git.run("remote", "add", "--", "origin", remote.url, cwd=path)
        else:  # a worker killed mid-write may have left git's own lock files behind
            for stale in ("index.lock", "HEAD.lock", f"refs/heads/{WORK_BRANCH}.lock"):
                (path / ".git" / stale).unlink(missing_ok=True)
        tracking = f"refs/remotes/origin/{remote.branch}"
        if not fetch:
            known = git.run("rev-parse", "--verify", "--quiet", tracking, cwd=path, check=False)
            if known.returncode == 0:
                git.run(
                    "checkout", "--quiet", "--force", "-B", WORK_BRANCH, tracking, "--", cwd=path
                )
                git.run("clean", "--quiet", "-ffdx", cwd=path)
                return Checkout(git, path, remote, known.stdout.strip(), fetched=False)
        if not git.fetch_branch(refspec=f"+refs/heads/{remote.branch}:{tracking}", cwd=path):
            # An empty repository, or a branch not there yet: the first commit makes it.
            git.run("update-ref", "-d", tracking, cwd=path, check=False)
            git.run("symbolic-ref", "HEAD", f"refs/heads/{WORK_BRANCH}", cwd=path)
            git.run("update-ref", "-d", f"refs/heads/{WORK_BRANCH}", cwd=path, check=False)
            git.run("read-tree", "--empty", cwd=path)
            head = ""
        else:
            git.run("checkout", "--quiet", "--force", "-B", WORK_BRANCH, tracking, "--", cwd=path)
            head = git.run("rev-parse", "HEAD", cwd=path).stdout.strip()
        git.run("clean", "--quiet", "-ffdx", cwd=path)
    except GitError as error:
        if error.network:
            raise
        # A broken working copy (a killed worker, a full disk) is rebuilt on the next try.
        shutil.rmtree(path, ignore_errors=True)
        raise GitError(error.message, transient=True) from error
    return Checkout(git, path, remote, head)


def _quoted(path: str) -> bytes:
    """A path as fast-import reads it: C-style quoted when it starts with a quote or holds a
    line break, else as it is."""
    raw = path.encode("utf-8", "surrogateescape")
    if not raw.startswith(b'"') and b"\n" not in raw:
        return raw
    escaped = raw.replace(b"\\", b"\\\\").replace(b'"', b'\\"').replace(b"\n", b"\\n")
    return b'"' + escaped + b'"'
