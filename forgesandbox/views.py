"""What the GitLab and Gitea routes share: who is asking and where the forge's pages are
(``View``), their operations by path (``Routes``), their pull requests newest first, a page at
a time, and their request log's entries."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .gitlab_params import Operation, Params
from .model import Forge, Hook, Pull, Repo


@dataclass
class View:
    """Who is asking, and where the forge's pages and git server are (for the URLs)."""

    forge: Forge
    web: str  # the "web UI" root of the forge's instance
    git: str  # the git server's root
    login: str
    emit: Callable[[Hook, str, dict], object]  # a webhook delivery: hook, event, payload


def newest_first(repo: Repo) -> list[Pull]:
    return sorted(repo.pulls.values(), key=lambda p: p.number, reverse=True)


def page_of(items: list, page: int, size: int) -> list:
    """Page `page` (from 1) of `size` items."""
    return items[(page - 1) * size : page * size]


class Routes:
    """Operations by method and path template; a ``{name}`` in a template is one path
    segment, handed to the handler by that name."""

    def __init__(self) -> None:
        self._routes: list[tuple[str, re.Pattern[str], Operation]] = []

    def add(
        self,
        method: str,
        template: str,
        handler: Callable[[Any], tuple[int, Any, dict[str, str]]],
        required: Params | None = None,
        optional: Params | None = None,
    ) -> None:
        pattern = re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", template)
        operation = Operation(handler, required or {}, optional or {})
        self._routes.append((method, re.compile(f"^{pattern}$"), operation))

    def resolve(self, method: str, path: str) -> tuple[Operation, dict[str, str]] | None:
        for route_method, pattern, operation in self._routes:
            if route_method == method and (match := pattern.match(path)):
                return operation, match.groupdict()
        return None


def log_entry(
    view: View | None,
    method: str,
    path: str,
    query: list[tuple[str, str]],
    status: int,
    refused: str | None,
) -> dict[str, Any]:
    """A request's entry in the stand-in's log; nothing checks these routes' answers against
    a published description, as the GitHub routes' are."""
    return {
        "method": method,
        "path": path,
        "query": dict(query),
        "user": view.login if view else None,
        "refused": refused,
        "response_error": None,
        "validation_seconds": 0.0,
        "status": status,
    }
