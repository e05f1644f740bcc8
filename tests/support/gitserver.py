"""Real git servers on loopback for the GitOps tests, and helpers to look into bare repos.

- `LocalRepositories`: bare repositories reached over file://, no server (the remotes of
  the tests `make test-fast` runs).
- `GitDaemon`: `git daemon --enable=receive-pack` (git:// remotes); can be stopped and
  started again on the same port, to test an unreachable remote.
- `GitHttpServer`: `git http-backend` behind a small threaded WSGI server that wants HTTP
  Basic auth with a given token (the https:// path of the writer, over plain HTTP on
  loopback). It records what it was asked, so tests can check no token is in a URL. It is
  `make run`'s git server too (portal.gitserver), without the token.

Also an entry point for the concurrency test's worker processes:

    python -m tests.support.gitserver write-gitops <request id>...
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from portal.gitserver import GitHttpServer

GIT_ENV = {
    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
    "HOME": tempfile.gettempdir(),
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "Tester",
    "GIT_AUTHOR_EMAIL": "tester@example.com",
    "GIT_COMMITTER_NAME": "Tester",
    "GIT_COMMITTER_EMAIL": "tester@example.com",
    "LC_ALL": "C",
}


def git(*args: str, cwd: Path | None = None, check: bool = True) -> str:
    proc = subprocess.run(
        ["git", *args], cwd=cwd, env=GIT_ENV, capture_output=True, text=True, check=False
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
    return proc.stdout


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.02)
    raise AssertionError(f"nothing listens on port {port} after {timeout}s")


def init_bare(path: Path, *, readme: bool = True) -> Path:
    """A bare repository with branch main; with a first commit holding a README."""
    git("init", "--quiet", "--bare", "-b", "main", str(path))
    if readme:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            git("init", "--quiet", "-b", "main", cwd=work)
            (work / "README.md").write_text("# GitOps\n")
            git("add", "README.md", cwd=work)
            git("commit", "--quiet", "-m", "Initial commit", cwd=work)
            git("push", "--quiet", str(path), "main", cwd=work)
    return path


@contextmanager
def payments_repo_server(root: Path, **tokens: str | None) -> Iterator[GitHttpServer]:
    """A git HTTP server over `root`/repos holding a fresh payments.git: the repository of
    the demo's payments tenant, as the tests that push and check it want it."""
    repos = root / "repos"
    repos.mkdir()
    init_bare(repos / "payments.git")
    with GitHttpServer(repos, **tokens) as running:
        yield running


@contextmanager
def payments_repo_daemon(root: Path) -> Iterator[GitDaemon]:
    """A git daemon over `root`/repos holding a fresh payments.git, as payments_repo_server
    but over git://."""
    repos = root / "repos"
    repos.mkdir()
    init_bare(repos / "payments.git")
    with GitDaemon(repos) as running:
        yield running


def files_on(bare: Path, branch: str = "main") -> dict[str, str]:
    """Every file on the branch of a bare repository, path → content."""
    listed = git("--git-dir", str(bare), "ls-tree", "-r", "-z", "--name-only", branch)
    return {
        path: git("--git-dir", str(bare), "show", f"{branch}:{path}")
        for path in filter(None, listed.split("\0"))
    }


def commits_on(bare: Path, branch: str = "main") -> list[dict[str, str]]:
    """Newest first: sha, author, subject, body and the Berth-Request trailer."""
    out = git(
        "--git-dir",
        str(bare),
        "log",
        "--format=%H%x1f%an <%ae>%x1f%s%x1f%B%x1f%(trailers:key=Berth-Request,valueonly)%x1e",
        branch,
    )
    commits = []
    for record in filter(None, (r.strip("\n") for r in out.split("\x1e"))):
        sha, author, subject, body, request = record.split("\x1f")
        commits.append(
            {
                "sha": sha,
                "author": author,
                "subject": subject,
                "body": body,
                "request": request.strip(),
            }
        )
    return commits


def push_outside_commit(bare: Path, path: str, content: str, branch: str = "main") -> str:
    """Someone else (not Berth) pushes a file: what a team or Kargo does."""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "clone"
        git("clone", "--quiet", "--branch", branch, str(bare), str(work))
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_text(content)
        git("add", path, cwd=work)
        git("commit", "--quiet", "-m", f"Team edits {path}", cwd=work)
        git("push", "--quiet", "origin", branch, cwd=work)
        return git("rev-parse", "HEAD", cwd=work).strip()


class LocalRepositories:
    """Bare repositories under `base` on this machine, reached over file://: git with no
    server between (the fast tests' remotes). Its `url` and `base` are a GitDaemon's."""

    def __init__(self, base: Path) -> None:
        self.base = base

    def url(self, name: str) -> str:
        return (self.base / name).as_uri()


class GitDaemon:
    """`git daemon` serving every repository under `base` read-write on loopback."""

    def __init__(self, base: Path, port: int | None = None) -> None:
        self.base = base
        self.port = port or free_port()
        self.process: subprocess.Popen | None = None

    def url(self, name: str) -> str:
        return f"git://127.0.0.1:{self.port}/{name}"

    def start(self) -> GitDaemon:
        self.process = subprocess.Popen(
            [
                "git",
                "daemon",
                "--enable=receive-pack",
                "--export-all",
                f"--base-path={self.base}",
                "--reuseaddr",
                "--listen=127.0.0.1",
                f"--port={self.port}",
                str(self.base),
            ],
            env=GIT_ENV,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        wait_for_port(self.port)
        return self

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)  # the daemon and its children
            self.process.wait()
        self.process = None

    def __enter__(self) -> GitDaemon:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: list[str]) -> int:
    """A worker process for the concurrency test: write the GitOps of each request id."""
    if len(argv) < 2 or argv[0] != "write-gitops":
        print(
            "usage: python -m tests.support.gitserver write-gitops <request id>...", file=sys.stderr
        )
        return 2
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
    import django

    django.setup()
    from provisioning import reconcile

    failures = 0
    for request_id in map(int, argv[1:]):
        try:
            written = reconcile.write_gitops(request_id=request_id)
            print(request_id, written.outcome, written.message, flush=True)
        except Exception as exc:
            failures += 1
            print(request_id, "failed", exc, flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
