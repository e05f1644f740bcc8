"""``ForgeSandbox``: the forge (``model``) behind a threaded HTTP server speaking the GitHub
REST subset (``api``), every request and answer checked against GitHub's description
(``validation``), webhooks delivered (``webhooks``), and the test controls: a reviewer
merging or closing in the "web UI", a commit pushed to a branch underneath, the request log.
What it speaks and what it does not: the package docstring."""

from __future__ import annotations

import json
import secrets
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from . import api, controls, gitea, gitlab, gitlab_render, render, web
from .model import Forge, ForgeError, Hook, Pull, Repo
from .spec import load_document, load_openapi, spec_path
from .validation import ForgeRequest, ForgeResponse, Validator
from .webhooks import Deliverer, Delivery

API_PREFIX = "/api/v3"  # GitHub Enterprise Server's API root, what PyGithub's base_url expects
CONTROL_PREFIX = "/_sandbox"
REQUEST_LOG_SIZE = 10_000


class ResponseInvalid(AssertionError):
    """The stand-in answered against GitHub's description: a bug in the stand-in."""


class ForgeSandbox:
    """A GitHub-compatible forge on a background thread; usable as a context manager::

        with ForgeSandbox(git_url=git_server.base_url, root=git_root) as forge:
            github = Github(base_url=forge.api_url, auth=Auth.Token(forge.token))

    ``root`` holds the bare repositories (``<owner>/<name>.git``; a temporary directory when
    not given), which the project's git server (or any ``git http-backend``) serves at
    ``git_url``: pushes there are what the forge sees. ``token`` belongs to ``user`` (made
    when not given); ``add_user`` makes more. ``validate`` checks every request and answer
    against GitHub's OpenAPI description (``spec``), which must then be there."""

    def __init__(
        self,
        root: str | Path | None = None,
        *,
        git_url: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        token: str | None = None,
        user: str = "forge-bot",
        validate: bool = True,
        verbose: bool = False,
    ) -> None:
        self._tmp = None if root is not None else tempfile.TemporaryDirectory(prefix="forge-")
        self.root = Path(root if root is not None else self._tmp.name)  # type: ignore[union-attr]
        self.host = host
        self.port = port
        self.verbose = verbose
        self.forge = Forge(self.root)
        self.user = user
        self.token = self.forge.add_user(user, token or "ghp_" + secrets.token_urlsafe(27))
        self._git_url = git_url
        self.validator: Validator | None = None
        if validate:
            path = spec_path()
            self.validator = Validator(load_openapi(path), load_document(path))
        self.deliverer = Deliverer()
        self._requests: list[dict] = []
        self._log_lock = threading.Lock()
        self.invalid_responses: list[dict] = []
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------------

    def start(self) -> ForgeSandbox:
        if self._server is not None:
            raise RuntimeError("the forge is already running")
        self._server = _Server((self.host, self.port), self)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"forgesandbox:{self.port}",
            daemon=True,
        )
        self._thread.start()
        self.deliverer.start()
        return self

    def stop(self) -> None:
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join()
        self.deliverer.stop()
        self._server = self._thread = None
        if self._tmp is not None:
            self._tmp.cleanup()

    def __enter__(self) -> ForgeSandbox:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("the forge is not running; call start() first")
        return f"http://{self.host}:{self.port}"

    @property
    def api_url(self) -> str:
        """The API root: PyGithub's ``base_url``."""
        return self.url + API_PREFIX

    @property
    def urls(self) -> render.Urls:
        return render.Urls(api=self.api_url, web=self.url, git=self._git_url or self.url + "/git")

    def clone_url(self, full_name: str) -> str:
        return f"{self.urls.git}/{full_name}.git"

    # -- the forge's operator (no token, no validation) ----------------------------------

    def add_user(self, login: str, token: str | None = None) -> str:
        """A user and a token of theirs; returns the token."""
        return self.forge.add_user(login, token)

    def create_repo(
        self,
        full_name: str,
        *,
        private: bool = True,
        default_branch: str = "main",
        files: dict[str, str] | None = None,
    ) -> Repo:
        """A repository with a first commit (a README unless ``files`` say otherwise)."""
        owner, name = full_name.split("/", 1)
        return self.forge.create_repo(
            owner, name, private=private, default_branch=default_branch, files=files
        )

    def grant(self, full_name: str, login: str, role: str) -> None:
        owner, name = full_name.split("/", 1)
        self.forge.grant(owner, name, login, role)

    def repo(self, full_name: str) -> Repo:
        owner, name = full_name.split("/", 1)
        return self.forge.repos[(owner, name)]

    def push_commit(
        self, full_name: str, branch: str, files: dict[str, str], message: str = "Change underneath"
    ) -> str:
        """Someone pushes a commit writing ``files`` onto ``branch`` (e.g. moves the base of a
        pull request underneath it; a new branch starts from the default one); returns the
        commit's sha."""
        with self.forge.lock:
            repo = self.repo(full_name)
            return repo.git.commit_files(branch, files, message, start=repo.default_branch)

    def merge_as_reviewer(
        self, full_name: str, number: int, reviewer: str | None = None, method: str = "merge"
    ) -> str:
        """A reviewer presses "Merge pull request" in the web UI: the same merge and webhook
        as the API's, without a request. Raises ``ForgeError`` (405) on a conflict."""
        repo = self.repo(full_name)
        reviewer = reviewer or repo.owner
        with self.forge.lock:
            pr = self.forge.pull(repo, number)
            sha = self.forge.merge_pull(repo, pr, reviewer, method=method)
            api.pull_event(self._call(reviewer), repo, pr, "closed")
            gitlab_render.merge_request_event(self._gitlab_view(reviewer), repo, pr, "merge")
            gitea.reviewer_event(self, reviewer, repo, pr)
        return sha

    def close_as_reviewer(self, full_name: str, number: int, reviewer: str | None = None) -> Pull:
        """A reviewer presses "Close pull request" in the web UI (not merged)."""
        repo = self.repo(full_name)
        reviewer = reviewer or repo.owner
        with self.forge.lock:
            pr = self.forge.pull(repo, number)
            if pr.state == "open":
                self.forge.close_pull(repo, pr)
                pr.closed_by = reviewer
                api.pull_event(self._call(reviewer), repo, pr, "closed")
                gitlab_render.merge_request_event(self._gitlab_view(reviewer), repo, pr, "close")
                gitea.reviewer_event(self, reviewer, repo, pr)
        return pr

    def deliveries(self, event: str | None = None) -> list[Delivery]:
        """Webhook deliveries so far (``webhooks.Delivery``), after waiting for those queued."""
        self.deliverer.flush()
        return [d for d in self.deliverer.log if event is None or d.event == event]

    def requests(self) -> list[dict]:
        """Every API request received: method, path, query, status, user, and, when it was
        refused by the validator or answered against the description, why."""
        with self._log_lock:
            return list(self._requests)

    def assert_valid_responses(self) -> None:
        """Raise unless every answer so far conformed to GitHub's description."""
        if self.invalid_responses:
            raise ResponseInvalid(
                "the forge stand-in answered against GitHub's description:\n"
                + "\n".join(
                    f"{r['method']} {r['path']} {r['status']}: {r['error']}"
                    for r in self.invalid_responses
                )
            )

    # -- serving -------------------------------------------------------------------------

    def _emit(self, repo: Repo, event: str, payload: dict, only: Hook | None) -> None:
        for hook in [only] if only else list(repo.hooks.values()):
            wanted = event in hook.events or "*" in hook.events
            if only or (hook.flavour == "github" and hook.active and wanted):
                self.deliverer.enqueue(hook, event, payload)

    def _call(self, login: str, **kwargs: Any) -> api.Call:
        return api.Call(
            forge=self.forge,
            urls=self.urls,
            login=login,
            params=kwargs.get("params", {}),
            query=kwargs.get("query", {}),
            body=kwargs.get("body"),
            emit=self._emit,
        )

    def _gitlab_view(self, login: str) -> gitlab_render.View:
        return gitlab_render.View(
            self.forge, self.url + "/gitlab", self.urls.git, login, self.deliverer.enqueue
        )

    def _record(self, entry: dict) -> None:
        with self._log_lock:
            self._requests.append(entry)
            del self._requests[:-REQUEST_LOG_SIZE]
            if entry.get("response_error"):
                self.invalid_responses.append(
                    {k: entry[k] for k in ("method", "path", "status")}
                    | {"error": entry["response_error"]}
                )

    def handle(
        self, method: str, raw_path: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, bytes, dict[str, str]]:
        """One HTTP request, answered as ``(status, body, headers)``."""
        url = urlsplit(raw_path)
        query_pairs = parse_qsl(url.query, keep_blank_values=True)
        path = url.path.rstrip("/") or "/"
        if path.startswith(CONTROL_PREFIX):
            return self._control(method, path, headers, body)
        if path.startswith(gitea.PREFIX):
            return gitea.handle(self, method, path, query_pairs, headers, body)
        if path.startswith(gitlab.PREFIX):
            token = headers.get("PRIVATE-TOKEN") or _token(headers.get("Authorization", ""))
            person = self.forge.user_of_token(token) if token else None
            view = self._gitlab_view(person.login) if person else None
            status, payload, extra, entry = gitlab.handle(view, method, path, query_pairs, body)
            self._record(entry)
            return status, json.dumps(payload).encode(), extra
        if web.serves(path) and not path.startswith(API_PREFIX + "/"):  # a person's pages
            return web.handle(self, method, path, query_pairs, headers, body)
        api_path = path.removeprefix(API_PREFIX) or "/"
        entry: dict[str, Any] = {
            "method": method,
            "path": api_path,
            "query": dict(query_pairs),
            "user": None,
            "refused": None,
            "response_error": None,
            "validation_seconds": 0.0,
        }
        request = ForgeRequest(
            method=method,
            path=api_path,
            query=query_pairs,
            headers=headers,
            body=body or None,
            content_type=headers.get("Content-Type", "application/json"),
        )
        status, payload, extra = self._answer(
            method, api_path, headers, body, query_pairs, request, entry
        )
        data = json.dumps(payload).encode() if payload is not None else b""
        if self.validator is not None and path.startswith(API_PREFIX):
            started = time.perf_counter()
            problem = self.validator.check_response(request, ForgeResponse(status, data))
            entry["validation_seconds"] += time.perf_counter() - started
            if problem and not entry["response_error"]:
                # The stand-in's bug: fail loudly, never pass a wrong answer on as GitHub's.
                entry["response_error"] = problem
                status = 500
                data = json.dumps(
                    render.error(
                        f"forgesandbox answered against GitHub's description: {problem}", 500
                    )
                ).encode()
        entry["status"] = status
        self._record(entry)
        return status, data, {"Content-Type": "application/json; charset=utf-8", **extra}

    def _answer(
        self,
        method: str,
        api_path: str,
        headers: dict[str, str],
        body: bytes,
        query_pairs: list[tuple[str, str]],
        request: ForgeRequest,
        entry: dict,
    ) -> tuple[int, Any, dict[str, str]]:
        token = _token(headers.get("Authorization", ""))
        person = self.forge.user_of_token(token) if token else None
        if person is None:
            message = "Bad credentials" if token else "Requires authentication"
            return 401, render.error(message, 401), {}
        entry["user"] = person.login
        if self.validator is not None:
            started = time.perf_counter()
            refusal = self.validator.check_request(request)
            entry["validation_seconds"] += time.perf_counter() - started
            if refusal is not None:
                entry["refused"] = refusal.detail
                return refusal.status, render.error(refusal.message, refusal.status), {}
        resolved = api.resolve(method, api_path)
        if resolved is None:
            return 404, render.error("Not Found", 404), {}
        handler, params = resolved
        try:
            parsed = json.loads(body) if body else None
        except ValueError:
            return 400, render.error("Problems parsing JSON", 400), {}
        call = self._call(person.login, params=params, query=dict(query_pairs), body=parsed)
        try:
            with self.forge.lock:
                return handler(call)
        except ForgeError as error:
            return error.status, render.error(error.message, error.status, error.errors), {}
        except Exception as error:  # the stand-in's bug: answer it, loudly, and keep serving
            entry["response_error"] = f"{type(error).__name__}: {error}"
            return 500, render.error(f"forgesandbox failed: {error!r}", 500), {}

    def _control(
        self, method: str, path: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, bytes, dict[str, str]]:
        """The test controls under /_sandbox/, for the forge's own token only."""
        if _token(headers.get("Authorization", "")) != self.token:
            return 401, b'{"message": "the test controls want the forge\'s own token"}', {}
        status, payload = controls.control(self, method, path.removeprefix(CONTROL_PREFIX), body)
        return status, json.dumps(payload).encode(), {"Content-Type": "application/json"}


def _token(header: str) -> str:
    scheme, _, value = header.partition(" ")
    return value.strip() if scheme.lower() in ("token", "bearer") else ""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as clients pool connections
    disable_nagle_algorithm = True  # headers and body are separate writes
    server: _Server

    def do_GET(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        headers = {key: value for key, value in self.headers.items()}
        status, data, extra = self.server.sandbox.handle(self.command, self.path, headers, body)
        self.send_response(status)
        for key, value in extra.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_POST = do_PUT = do_PATCH = do_DELETE = do_GET

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.sandbox.verbose:
            sys.stderr.write(f"forgesandbox: {format % args}\n")


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], sandbox: ForgeSandbox) -> None:
        self.sandbox = sandbox
        super().__init__(address, _Handler)
