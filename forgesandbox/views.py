"""What the GitLab and Gitea routes share: who is asking and where the forge's pages are
(``View``), and its pull requests newest first, a page at a time."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

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
