"""`make run`'s git server: the demo tenants' repositories (data/git/<tenant>.git) over git's
smart HTTP protocol on loopback, so a Flux tenant gets an http:// URL, the only kind besides
https:// and ssh:// that Flux's GitRepository admits. A development tool, never deployed:
`git http-backend` behind a small threaded WSGI server, pushes allowed. The tests use it too
(tests/support/gitserver.py), with a token it then wants as an HTTP Basic password.

It has one web page, so the demo's commits are links: `GET /<repository>.git/commit/<sha>`
answers what `git show` prints of that commit, as text (the demo tenants' commit link), for a
repository directly under the root (`payments.git`) or in folders under it, as the forge
stand-in keeps its repositories (`demo/payments.git`).

    python -m portal.gitserver --root data/git --port 8002
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path
from socketserver import ThreadingMixIn
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

DEFAULT_PORT = 8002
# A commit's page: a repository under the root (in folders or not), and a commit id (never
# an option or a path: git reads nothing else from the request). Each name starts with a
# letter or digit and has no two dots in a row, so none is `.` or `..`.
_NAME = r"[A-Za-z0-9][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+)*"
COMMIT_PAGE = re.compile(
    rf"^/(?P<repo>(?:{_NAME}/)*{_NAME}\.git)/commit/(?P<sha>[0-9a-f]{{4,64}})/?$"
)


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


class _ThreadingWSGIServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class GitHttpServer:
    """`git http-backend` for every repository under `root`, over HTTP on loopback. With a
    `token`, it wants `Authorization: Basic` with the token as the password (what GitHub,
    GitLab and Gitea accept for tokens); `seen` records what it was asked, so tests can check
    no token is in a URL."""

    def __init__(
        self,
        root: Path,
        *,
        token: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        read_only_token: str | None = None,
    ) -> None:
        self.root = Path(root)
        self.token = token
        # A token that may fetch but not push, as a forge's read-only deploy token: pushes
        # with it are answered 403.
        self.read_only_token = read_only_token
        self.seen: list[dict[str, str]] = []
        self._server = make_server(
            host, port, self.app, server_class=_ThreadingWSGIServer, handler_class=_QuietHandler
        )
        self.host = host
        self.port = self._server.server_port
        # stop() waits for the thread to look: at socketserver's default of half a second,
        # every test that runs one would wait that long.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def url(self, name: str) -> str:
        return f"{self.base_url}/{name}"

    def _authorized(self, header: str) -> bool:
        if self.token is None:
            return True
        scheme, _, value = header.partition(" ")
        if scheme.lower() != "basic":
            return False
        try:
            _, _, password = base64.b64decode(value).decode().partition(":")
        except ValueError:
            return False
        return password in (self.token, self.read_only_token)

    def _pushing_read_only(self, environ: dict) -> bool:
        if self.read_only_token is None:
            return False
        pushing = "git-receive-pack" in environ.get("PATH_INFO", "") + environ.get(
            "QUERY_STRING", ""
        )
        scheme, _, value = environ.get("HTTP_AUTHORIZATION", "").partition(" ")
        try:
            password = base64.b64decode(value).decode().partition(":")[2]
        except ValueError:
            return False
        return pushing and scheme.lower() == "basic" and password == self.read_only_token

    def app(self, environ, start_response):
        if self._pushing_read_only(environ):
            start_response("403 Forbidden", [("Content-Type", "text/plain")])
            return [b"this token may read, not push\n"]
        authorized = self._authorized(environ.get("HTTP_AUTHORIZATION", ""))
        if self.token is not None:
            self.seen.append(
                {
                    "method": environ["REQUEST_METHOD"],
                    "path": environ.get("PATH_INFO", ""),
                    "query": environ.get("QUERY_STRING", ""),
                    "authorized": str(authorized),
                }
            )
        if not authorized:
            start_response(
                "401 Unauthorized",
                [("WWW-Authenticate", 'Basic realm="git"'), ("Content-Type", "text/plain")],
            )
            return [b"a token is required\n"]
        page = COMMIT_PAGE.match(environ.get("PATH_INFO", ""))
        if page and environ["REQUEST_METHOD"] in ("GET", "HEAD"):
            return self._commit_page(page["repo"], page["sha"], start_response)
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length) if length else b""
        # The request reaches git only as CGI environment values; git http-backend refuses
        # paths outside GIT_PROJECT_ROOT itself.
        cgi = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
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
            ["git", "http-backend"],  # noqa: S607 - git from PATH, as Berth's own git
            input=body,
            env=cgi,
            capture_output=True,
            check=False,
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

    def _commit_page(self, repo: str, sha: str, start_response):
        """What `git show` prints of one commit, as text; 404 for an unknown one."""
        git_dir = self.root / repo
        shown = None
        if (git_dir / "HEAD").is_file() and git_dir.resolve().is_relative_to(self.root.resolve()):
            shown = subprocess.run(  # noqa: S603 - fixed argv; repo and sha matched COMMIT_PAGE
                [  # noqa: S607 - git from PATH, as every git call here
                    "git",
                    f"--git-dir={git_dir}",
                    "show",
                    "--no-color",
                    "--format=fuller",
                    "--stat",
                    "--patch",
                    f"{sha}^{{commit}}",
                    "--",
                ],
                env={
                    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                    "GIT_CONFIG_NOSYSTEM": "1",
                    "GIT_CONFIG_GLOBAL": os.devnull,
                },
                capture_output=True,
                check=False,
            )
        if shown is None or shown.returncode != 0:
            start_response("404 Not Found", [("Content-Type", "text/plain; charset=utf-8")])
            return [f"No commit {sha} in {repo}.\n".encode()]
        start_response(
            "200 OK",
            [("Content-Type", "text/plain; charset=utf-8"), ("X-Content-Type-Options", "nosniff")],
        )
        return [shown.stdout]

    def serve_forever(self) -> None:
        """In this thread, until interrupted (the command line's way)."""
        try:
            self._server.serve_forever()
        finally:
            self._server.server_close()

    def start(self) -> GitHttpServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> GitHttpServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m portal.gitserver",
        description="Serve the demo's git repositories over HTTP.",
    )
    parser.add_argument(
        "--root",
        type=Path,
        required=True,
        help="the directory holding the bare repositories (<name>.git)",
    )
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    options = parser.parse_args(argv)
    server = GitHttpServer(options.root, port=options.port)
    # `make run` stops its children with SIGTERM: leave the loop as Ctrl-C would.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    print(f"Serving the git repositories in {options.root} at {server.base_url}/", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
