"""Berth's own documentation (the Markdown files under docs/), so the pages' references to
it are links that work wherever Berth runs, offline clusters included."""

from __future__ import annotations

import functools
from pathlib import Path

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.safestring import mark_safe
from markdown_it import MarkdownIt

DOCS_DIR = Path(settings.BASE_DIR) / "docs"


@functools.lru_cache(maxsize=64)
def _rendered(path: Path, modified: float) -> tuple[str, str]:
    """(title, HTML) of one document; raw HTML in it is shown as text, never passed on."""
    text = path.read_text(encoding="utf-8")
    title = next(
        (line.lstrip("# ").strip() for line in text.splitlines() if line.startswith("# ")),
        path.stem,
    )
    renderer = MarkdownIt("commonmark", {"html": False}).enable("table")
    return title, renderer.render(text)


def doc_page(request: HttpRequest, name: str) -> HttpResponse:
    """`/docs/<name>.md`: only a file that is in docs/ itself (the name is a slug, and must
    be one of the directory's own files), rendered; public, as the repository's docs are."""
    documents = {path.stem: path for path in DOCS_DIR.glob("*.md")}
    if name not in documents:
        raise Http404(f"No document docs/{name}.md.")
    path = documents[name]
    title, html = _rendered(path, path.stat().st_mtime)
    return render(
        request,
        "tenants/doc_page.html",
        {
            "title": title,
            "name": name,
            "body": mark_safe(html),  # noqa: S308 - rendered with html off
        },
    )
