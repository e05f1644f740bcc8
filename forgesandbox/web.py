"""The forge's web pages, for a person reviewing in a browser: a pull request's page at its
``html_url`` (``/<owner>/<repo>/pull/<number>``: title, body, state, the files changed and
the unified diff from git, Merge and Close buttons), its diff as text (``.diff``, its
``diff_url``) and a repository's pull requests (``/<owner>/<repo>/pulls``).

No token: whoever opens them is the forge's reviewer, the repository's owner (as
``ForgeSandbox.merge_as_reviewer`` is by default), and the buttons do exactly what
``merge_as_reviewer`` and ``close_as_reviewer`` do, webhooks included: the API's merge and
close, as a person in GitHub's web UI makes them. Merge merges the head the page showed
(GitHub's 409 when it moved since).

The buttons are HTML forms that POST a random token made once per process, which a page of
another site cannot read, to a ``Host`` the forge answers on (loopback or its own address,
so a name rebound to 127.0.0.1 cannot post either), from the same origin when the browser
says which; answered with a redirect back to the page. Everything shown is escaped; the pages
need no script and allow none (``Content-Security-Policy``)."""

from __future__ import annotations

import hmac
import html
import re
import secrets
from typing import Any, Protocol
from urllib.parse import parse_qs

from .model import Forge, ForgeError, Pull, Repo

# A repository's pages: its root, its pull requests, one pull request, its diff, its buttons.
PAGE = re.compile(
    r"^/(?P<owner>[^/]+)/(?P<name>[^/]+)"
    r"(?:/pulls|/pull/(?P<number>\d+)(?P<suffix>\.diff|/merge|/close)?)?$"
)
FORM_TOKEN = secrets.token_urlsafe(32)  # per process: only the forge's own pages carry it
MAX_DIFF_CHARS = 1_000_000  # a longer diff is left to the .diff link
STATES = ("open", "closed", "all")
_VERBS = {"open": "wants to merge", "merged": "asked to merge", "closed": "asked to merge"}
Answer = tuple[int, bytes, dict[str, str]]
_STYLE = """
body { font: 15px/1.5 system-ui, sans-serif; margin: 0 auto; max-width: 70rem; padding: 1rem; }
header { border-bottom: 1px solid #ccc; color: #555; margin-bottom: 1rem; }
.state { border-radius: 1em; color: #fff; padding: .1em .7em; }
.open { background: #1a7f37; } .merged { background: #8250df; } .closed { background: #cf222e; }
.problem { background: #fff0f0; border: 1px solid #cf222e; padding: .5em 1em; }
.body { background: #f6f8fa; padding: .5em 1em; white-space: pre-wrap; }
form { display: inline; } button { font: inherit; margin-right: .5em; padding: .3em 1em; }
pre { background: #f6f8fa; font-size: 13px; overflow-x: auto; padding: .5em; }
pre span { display: block; } .add { background: #e6ffec; } .del { background: #ffebe9; }
.hunk { color: #0550ae; } .meta { color: #555; font-weight: bold; }
table { border-collapse: collapse; } td, th { padding: .2em .8em; text-align: left; }
"""
_HEADERS = {
    "Content-Type": "text/html; charset=utf-8",
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}


class Sandbox(Protocol):
    """What the pages use of ``server.ForgeSandbox`` (a Protocol: no import cycle)."""

    forge: Forge
    host: str
    port: int

    def merge_as_reviewer(
        self, full_name: str, number: int, reviewer: str | None = ..., method: str = ...
    ) -> str: ...
    def close_as_reviewer(
        self, full_name: str, number: int, reviewer: str | None = ...
    ) -> Pull: ...


def serves(path: str) -> bool:
    """Whether ``path`` is one of these pages (the API, GitLab, Gitea and control routes are
    matched before)."""
    return PAGE.match(path) is not None


def handle(
    sandbox: Sandbox,
    method: str,
    path: str,
    query: list[tuple[str, str]],
    headers: dict[str, str],
    body: bytes,
) -> Answer:
    match = PAGE.match(path)
    repo = sandbox.forge.repos.get((match["owner"], match["name"])) if match else None
    if match is None or repo is None:
        return _page(404, "Not found", "<p>There is no such repository here.</p>")
    suffix = match["suffix"] or ""
    wanted = "POST" if suffix in ("/merge", "/close") else "GET"
    if method != wanted:
        return _page(405, "Method not allowed", f"<p>Only {wanted} here.</p>", Allow=wanted)
    if match["number"] is None:
        if not path.endswith("/pulls"):
            return 302, b"", {"Location": f"/{repo.full_name}/pulls"}
        state = dict(query).get("state", "all")
        return pulls_page(sandbox.forge, repo, state if state in STATES else "all")
    pull = repo.pulls.get(int(match["number"]))
    if pull is None:
        return _page(404, "Not found", f"<p>{_e(repo.full_name)} has no such pull request.</p>")
    if suffix == ".diff":
        with sandbox.forge.lock:
            head_sha, base_sha = sandbox.forge.tips(repo, pull)
            diff = repo.git.diff(base_sha, head_sha)[1]
        return 200, diff.encode(), {**_HEADERS, "Content-Type": "text/plain; charset=utf-8"}
    if wanted == "POST":
        return _act(sandbox, repo, pull, suffix.removeprefix("/"), headers, body)
    return pull_page(sandbox.forge, repo, pull)


def _act(
    sandbox: Sandbox, repo: Repo, pull: Pull, action: str, headers: dict[str, str], body: bytes
) -> Answer:
    """A button pressed: merged or closed as the reviewer, then back to the page."""
    form = {key: values[0] for key, values in parse_qs(body.decode(errors="replace")).items()}
    refusal = _refusal(sandbox, {k.lower(): v for k, v in headers.items()}, form)
    if refusal:
        return _page(403, "Refused", f"<p>{_e(refusal)}</p>")
    try:
        if action == "close":
            sandbox.close_as_reviewer(repo.full_name, pull.number)
        elif not pull.merged:  # a second press of Merge only shows the merge
            with sandbox.forge.lock:
                head_sha = sandbox.forge.tips(repo, pull)[0]
                if pull.state == "open" and form.get("sha") != head_sha:
                    raise ForgeError(
                        409, "Head branch was modified. Review and try the merge again."
                    )
                sandbox.merge_as_reviewer(repo.full_name, pull.number)
    except ForgeError as error:
        return pull_page(sandbox.forge, repo, pull, status=error.status, problem=error.message)
    return 303, b"", {"Location": f"/{repo.full_name}/pull/{pull.number}"}


def _refusal(sandbox: Sandbox, headers: dict[str, str], form: dict[str, str]) -> str:
    """Why a button's POST is not taken, or "" when it is."""
    if not hmac.compare_digest(form.get("token", "").encode(), FORM_TOKEN.encode()):
        return "This form is not one of this forge's pages (or the forge restarted): reload it."
    hosts = {f"{name}:{sandbox.port}" for name in ("127.0.0.1", "localhost", "[::1]")}
    host = headers.get("host", "")
    if host not in hosts | {f"{sandbox.host}:{sandbox.port}"}:
        return f"This forge does not answer forms for the host {host!r}."
    origin = headers.get("origin")
    if origin is not None and origin != f"http://{host}":
        return f"A form from {origin!r} may not act here."
    return ""


# --- pages -------------------------------------------------------------------------------


def pull_page(
    forge: Forge, repo: Repo, pull: Pull, *, status: int = 200, problem: str = ""
) -> Answer:
    with forge.lock:
        head_sha, base_sha = forge.tips(repo, pull)
        mergeable = forge.mergeable(repo, pull)
        files, diff = repo.git.diff(base_sha, head_sha)
    state = "merged" if pull.merged else pull.state
    link = f"/{repo.full_name}/pull/{pull.number}"
    parts = [
        f'<p><a href="/{_e(repo.full_name)}/pulls">{_e(repo.full_name)}: pull requests</a></p>',
        f"<h1>{_e(pull.title)} <small>#{pull.number}</small></h1>",
        f'<p><span class="state {state}">{state.capitalize()}</span> '
        f"{_e(pull.user)} {_VERBS[state]} <code>{_e(pull.head)}</code> "
        f"(<code>{head_sha[:12]}</code>) into <code>{_e(pull.base)}</code>; "
        f"opened {_e(pull.created_at)}.</p>",
    ]
    if problem:
        parts.append(f'<p class="problem" role="alert">{_e(problem)}</p>')
    parts.append(f'<div class="body">{_e(pull.body or "No description.")}</div>')
    if pull.merged:
        parts.append(
            f"<p>Merged by {_e(pull.merged_by or '')} at {_e(pull.merged_at or '')} as "
            f"<code>{_e(pull.merge_commit_sha or '')}</code>.</p>"
        )
    elif pull.state == "closed":
        closer = f" by {_e(pull.closed_by)}" if pull.closed_by else ""
        parts.append(f"<p>Closed{closer} at {_e(pull.closed_at or '')}, not merged.</p>")
    else:
        parts.append(_buttons(repo, pull, head_sha, mergeable))
    parts.append(_files(files, diff, link))
    return _page(status, f"{pull.title} #{pull.number}", "\n".join(parts))


def _buttons(repo: Repo, pull: Pull, head_sha: str, mergeable: bool | None) -> str:
    action = f"/{_e(repo.full_name)}/pull/{pull.number}"
    token = f'<input type="hidden" name="token" value="{_e(FORM_TOKEN)}">'
    said = (
        "This branch has no conflicts with the base branch."
        if mergeable
        else "This branch has conflicts with the base branch: it cannot be merged here."
    )
    merge = (
        f'<form method="post" action="{action}/merge">{token}'
        f'<input type="hidden" name="sha" value="{_e(head_sha)}">'
        "<button>Merge pull request</button></form>"
        if mergeable
        else ""
    )
    close = (
        f'<form method="post" action="{action}/close">{token}'
        "<button>Close pull request</button></form>"
    )
    who = f"You act as {_e(repo.owner)}, the repository's owner."
    return f"<p>{said} {who}</p><p>{merge}{close}</p>"


def _files(files: list[tuple[str, str, str]], diff: str, link: str) -> str:
    listed = "".join(
        f'<li><a href="#file-{n}">{_e(path)}</a> <span class="add">+{_e(added)}</span> '
        f'<span class="del">-{_e(deleted)}</span></li>'
        for n, (added, deleted, path) in enumerate(files, 1)
    )
    parts = [
        f"<h2>Files changed ({len(files)})</h2><ul>{listed}</ul>",
        f'<p><a href="{_e(link)}.diff">The diff as text</a></p>',
    ]
    if len(diff) > MAX_DIFF_CHARS:
        return "".join(parts) + "<p>The diff is too long to show here.</p>"
    chunks = re.split(r"^(?=diff --git )", diff, flags=re.MULTILINE)
    for n, chunk in enumerate((c for c in chunks if c), 1):
        path = files[n - 1][2] if n <= len(files) else ""
        lines = "".join(
            f'<span class="{_line_class(line)}">{_e(line)}\n</span>' for line in chunk.splitlines()
        )
        parts.append(f'<section id="file-{n}"><h3>{_e(path)}</h3><pre>{lines}</pre></section>')
    return "".join(parts)


def _line_class(line: str) -> str:
    if line.startswith(("+++ ", "--- ", "diff --git ", "index ", "new file", "deleted file")):
        return "meta"
    return {"+": "add", "-": "del", "@": "hunk"}.get(line[:1], "context")


def pulls_page(forge: Forge, repo: Repo, state: str) -> Answer:
    with forge.lock:
        pulls = sorted(repo.pulls.values(), key=lambda p: p.number, reverse=True)
    shown = [p for p in pulls if state == "all" or p.state == state]
    filters = " · ".join(
        f"<strong>{name}</strong>" if name == state else f'<a href="?state={name}">{name}</a>'
        for name in STATES
    )
    rows = "".join(
        f'<tr><td>#{p.number}</td><td><a href="/{_e(repo.full_name)}/pull/{p.number}">'
        f"{_e(p.title)}</a></td><td>{'merged' if p.merged else p.state}</td>"
        f"<td><code>{_e(p.head)}</code> → <code>{_e(p.base)}</code></td>"
        f"<td>{_e(p.user)}</td><td>{_e(p.updated_at)}</td></tr>"
        for p in shown
    )
    table = (
        "<table><tr><th>#</th><th>title</th><th>state</th><th>branches</th><th>by</th>"
        f"<th>updated</th></tr>{rows}</table>"
        if shown
        else "<p>No pull requests.</p>"
    )
    title = f"{repo.full_name}: pull requests"
    return _page(200, title, f"<h1>{_e(title)}</h1><p>{filters}</p>{table}")


def _page(status: int, title: str, content: str, **headers: str) -> Answer:
    document = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{_e(title)}</title><style>{_STYLE}</style></head><body>"
        "<header>forgesandbox: a forge stand-in's review pages</header>"
        f"<main>{content}</main></body></html>\n"
    )
    return status, document.encode(), {**_HEADERS, **headers}


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)
