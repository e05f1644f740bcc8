"""Berth's API over HTTP (httpx): where it is and who you are, from the environment or the
config file, and its errors as the problem details it answers."""

from __future__ import annotations

import dataclasses
import os
import tomllib
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import tomli_w

from berth_cli.calls import CALLS
from berth_cli.files import write_private

DEFAULT_URL = "http://127.0.0.1:8000"
TIMEOUT = 30.0


def config_path() -> Path:
    """BERTH_CONFIG, else $XDG_CONFIG_HOME/berth/config.toml (~/.config by default)."""
    if os.environ.get("BERTH_CONFIG"):
        return Path(os.environ["BERTH_CONFIG"])
    base = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(base) / "berth" / "config.toml"


def read_config() -> dict[str, Any]:
    path = config_path()
    if not path.exists():
        return {}
    with path.open("rb") as handle:
        return tomllib.load(handle)


def write_config(values: dict[str, Any]) -> Path:
    """The config file holds an API token: readable by its owner only."""
    path = config_path()
    write_private(path, tomli_w.dumps(values).encode())
    return path


class ApiProblem(Exception):
    """An error answer; `problem` is its RFC 9457 body (or what stood in for one)."""

    def __init__(self, status: int, problem: dict[str, Any]) -> None:
        self.status = status
        self.problem = problem
        super().__init__(self.describe())

    def describe(self) -> str:
        problem = self.problem
        title = str(problem.get("title") or "error").rstrip(".")
        errors = problem.get("errors") or {}
        # With field errors, the detail ("Invalid fields: a, b.") only lists what follows.
        detail = "" if errors else str(problem.get("detail") or "")
        lines = [f"{self.status} {title}" + (f": {detail}" if detail else "")]
        for field, messages in errors.items():
            lines.append(f"  {field}: {' '.join(messages)}")
        return "\n".join(lines)


class NotConfigured(Exception):
    pass


@dataclass
class Berth:
    url: str
    token: str
    transport: httpx.BaseTransport | None = None
    last_status: int = dataclasses.field(
        default=0, compare=False
    )  # of the last call that succeeded

    @classmethod
    def from_settings(cls, url: str | None = None, token: str | None = None) -> Berth:
        """--url / BERTH_URL / the config file; BERTH_TOKEN / the config file."""
        config = read_config()
        url = url or os.environ.get("BERTH_URL") or config.get("url") or DEFAULT_URL
        token = token or os.environ.get("BERTH_TOKEN") or config.get("token") or ""
        if not token:
            raise NotConfigured(
                "No API token: set BERTH_TOKEN or run `berth login` (make "
                f"one on Berth's API tokens page, {url.rstrip('/')}/tokens/)."
            )
        return cls(url=url.rstrip("/"), token=token)

    def call(
        self,
        name: str,
        *,
        path: dict[str, Any] | None = None,
        query: dict[str, Any] | None = None,
        body: dict[str, Any] | None = None,
    ) -> Any:
        """One call of the table, sending only what the table says it sends."""
        spec = CALLS[name]
        sent_query = {k: v for k, v in (query or {}).items() if v not in (None, "")}
        sent_body = {k: v for k, v in (body or {}).items() if v is not None}
        unknown = (set(sent_query) - set(spec.query)) | (set(sent_body) - set(spec.body))
        if unknown:  # a programming error: the table is what the schema test checks
            raise ValueError(f"{name} does not send {sorted(unknown)}")
        headers = {"Authorization": f"Bearer {self.token}", "Accept": "application/json"}
        if spec.method == "POST":
            headers["Idempotency-Key"] = str(uuid.uuid4())  # safe to retry
        with httpx.Client(transport=self.transport, timeout=TIMEOUT) as http:
            answer = http.request(
                spec.method,
                self.url + spec.path.format(**(path or {})),
                params=sent_query,
                json=sent_body if spec.method != "GET" else None,
                headers=headers,
            )
        if answer.status_code >= 400:
            try:
                problem = answer.json()
            except ValueError:
                problem = {"title": answer.reason_phrase, "detail": answer.text[:500]}
            raise ApiProblem(answer.status_code, problem)
        self.last_status = answer.status_code
        return answer.json() if answer.content else None

    def every(self, name: str, **query: Any) -> list[dict[str, Any]]:
        """All pages of a list."""
        rows: list[dict[str, Any]] = []
        page = 1
        while True:
            answer = self.call(name, query={**query, "page": page, "page_size": 200})
            rows += answer["results"]
            if not answer.get("next"):
                return rows
            page += 1
