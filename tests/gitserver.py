"""Real git servers on loopback for the GitOps tests, and helpers to look into bare repos.

- `GitDaemon`: `git daemon --enable=receive-pack` (git:// remotes); can be stopped and
  started again on the same port, to test an unreachable remote.
- `GitHttpServer`: `git http-backend` behind a small threaded WSGI server that wants HTTP
  Basic auth with a given token (the https:// path of the writer, over plain HTTP on
  loopback). It records what it was asked, so tests can check no token is in a URL.

Also an entry point for the concurrency test's worker processes:

    python -m tests.gitserver write-gitops <request id>...
"""

from __future__ import annotations

import base64
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from socketserver import ThreadingMixIn
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

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


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


class _ThreadingWSGIServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class GitHttpServer:
    """`git http-backend` over HTTP on loopback, wanting `Authorization: Basic` with `token`
    as the password (what GitHub, GitLab and Gitea accept for tokens)."""

    def __init__(self, root: Path, *, token: str) -> None:
        self.root = root
        self.token = token
        self.seen: list[dict[str, str]] = []
        self._server = make_server(
            "127.0.0.1",
            0,
            self.app,
            server_class=_ThreadingWSGIServer,
            handler_class=_QuietHandler,
        )
        self.port = self._server.server_port
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.port}/{name}"

    def _authorized(self, header: str) -> bool:
        scheme, _, value = header.partition(" ")
        if scheme.lower() != "basic":
            return False
        try:
            _, _, password = base64.b64decode(value).decode().partition(":")
        except ValueError:
            return False
        return password == self.token

    def app(self, environ, start_response):  # noqa: ANN001, ANN201 - WSGI
        authorization = environ.get("HTTP_AUTHORIZATION", "")
        self.seen.append(
            {
                "method": environ["REQUEST_METHOD"],
                "path": environ.get("PATH_INFO", ""),
                "query": environ.get("QUERY_STRING", ""),
                "authorized": str(self._authorized(authorization)),
            }
        )
        if not self._authorized(authorization):
            start_response(
                "401 Unauthorized",
                [("WWW-Authenticate", 'Basic realm="git"'), ("Content-Type", "text/plain")],
            )
            return [b"a token is required\n"]
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length) if length else b""
        cgi = {
            "PATH": GIT_ENV["PATH"],
            "GIT_PROJECT_ROOT": str(self.root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_CONFIG_COUNT": "1",
            "GIT_CONFIG_KEY_0": "http.receivepack",
            "GIT_CONFIG_VALUE_0": "true",
            "REQUEST_METHOD": environ["REQUEST_METHOD"],
            "PATH_INFO": environ.get("PATH_INFO", ""),
            "QUERY_STRING": environ.get("QUERY_STRING", ""),
            "CONTENT_TYPE": environ.get("CONTENT_TYPE", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_USER": "berth",
            "REMOTE_ADDR": "127.0.0.1",
        }
        if environ.get("HTTP_CONTENT_ENCODING"):
            cgi["HTTP_CONTENT_ENCODING"] = environ["HTTP_CONTENT_ENCODING"]
        if environ.get("HTTP_GIT_PROTOCOL"):
            cgi["GIT_PROTOCOL"] = environ["HTTP_GIT_PROTOCOL"]
        proc = subprocess.run(
            ["git", "http-backend"], input=body, env=cgi, capture_output=True, check=False
        )
        separator = b"\r\n\r\n" if b"\r\n\r\n" in proc.stdout else b"\n\n"
        head, _, payload = proc.stdout.partition(separator)
        status, headers = "200 OK", []
        for line in head.decode("latin-1").splitlines():
            key, _, value = line.partition(":")
            if key.lower() == "status":
                status = value.strip()
            elif key:
                headers.append((key.strip(), value.strip()))
        start_response(status, headers)
        return [payload]

    def __enter__(self) -> GitHttpServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def main(argv: list[str]) -> int:
    """A worker process for the concurrency test: write the GitOps of each request id."""
    if len(argv) < 2 or argv[0] != "write-gitops":
        print("usage: python -m tests.gitserver write-gitops <request id>...", file=sys.stderr)
        return 2
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
    import django

    django.setup()
    from provisioning import engine

    failures = 0
    for request_id in map(int, argv[1:]):
        try:
            written = engine.write_gitops(request_id=request_id)
            print(request_id, written.outcome, written.message, flush=True)
        except Exception as exc:  # noqa: BLE001 - reported, counted, the process goes on
            failures += 1
            print(request_id, "failed", exc, flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
