"""A tenant's forge through its REST API: open a pull request for a branch Berth pushed, read
its state, ask whether the token may write. GitHub and GitHub Enterprise through PyGithub,
GitLab (its merge requests, numbered by `iid`) through python-gitlab, Gitea and Forgejo
through their REST API (provisioning.gitops.forge_gitea), behind the same functions. I/O and
nothing else; the token never appears in a message or a log line."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar
from urllib.parse import urlsplit

import gitlab
import requests
from django.conf import settings
from github import Auth, Github, GithubException
from github.PullRequest import PullRequest as GithubPull

from provisioning.gitops.forge_gitea import Client as GiteaClient
from provisioning.gitops.forge_gitea import GiteaRefused
from provisioning.gitops.remote import redact
from tenants.egress import EgressRefused, Unresolvable, check_host

TIMEOUT_SECONDS = 20
T = TypeVar("T")


class ForgeError(Exception):
    """The forge refused or did not answer; `message` is what a person should read."""

    def __init__(self, message: str, *, transient: bool, status: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.transient = transient
        self.status = status  # the forge's HTTP status; 0 when it did not answer
        self.attempts = 1


@dataclass(frozen=True)
class Forge:
    api_url: str  # GitHub's API root; GitLab's instance URL; Gitea's instance or API root
    repository: str  # owner/name (GitLab: the project's path)
    token: str = field(default="", repr=False)
    kind: str = "github"  # github | gitlab | gitea (Gitea or Forgejo)


@dataclass(frozen=True)
class PullState:
    number: int
    url: str
    state: str  # open | merged | closed
    head_sha: str
    branch: str = ""  # its head branch
    merged_by: str = ""
    merge_sha: str = ""
    # Who closed it unmerged, where the forge says (GitLab does; GitHub's and Gitea's pull
    # requests do not): never what a webhook claims.
    closed_by: str = ""


def repository_of(repo_url: str) -> str:
    """owner/name of a repository's clone URL (https://host/owner/name.git, git@host:o/n)."""
    path = urlsplit(repo_url).path if "://" in repo_url else repo_url.partition(":")[2]
    parts = [part for part in path.removesuffix(".git").split("/") if part]
    return "/".join(parts[-2:])


def _allowed(forge: Forge) -> None:
    parts = urlsplit(forge.api_url)
    try:
        check_host(parts.hostname or "", parts.port or (443 if parts.scheme == "https" else 80))
    except (EgressRefused, Unresolvable) as refused:
        raise ForgeError(f"the forge's API URL is refused: {refused}", transient=False) from None


def _client(forge: Forge) -> Github:
    _allowed(forge)
    return Github(
        base_url=forge.api_url.rstrip("/"),
        auth=Auth.Token(forge.token),
        timeout=TIMEOUT_SECONDS,
        retry=None,
        # GitHub asks integrations to pace their calls, writes a second apart (PyGithub's
        # defaults); a forge of one's own may be asked faster.
        seconds_between_requests=settings.BERTH_GITHUB_PAUSE_SECONDS,
        seconds_between_writes=settings.BERTH_GITHUB_WRITE_PAUSE_SECONDS,
    )


def _failed(forge: Forge, doing: str, error: Exception) -> ForgeError:
    if isinstance(error, GiteaRefused):
        message = f"the forge refused to {doing}: {error}"
        transient = error.status >= 500 or error.status == 429
        return ForgeError(redact(message, [forge.token]), transient=transient, status=error.status)
    if isinstance(error, gitlab.GitlabError) and error.response_code:
        message = f"the forge refused to {doing}: {error.response_code} {error.error_message}"
        status = error.response_code
        transient = status >= 500 or status == 429
        return ForgeError(redact(message, [forge.token]), transient=transient, status=status)
    if isinstance(error, GithubException):
        said = error.data.get("message", "") if isinstance(error.data, dict) else ""
        message = f"the forge refused to {doing}: {error.status} {said}".rstrip()
        transient = error.status >= 500 or error.status == 429
        status = error.status
    else:
        message = f"the forge did not answer while asked to {doing}"
        transient, status = True, 0
    return ForgeError(redact(message, [forge.token]), transient=transient, status=status)


def state_of(pull: GithubPull) -> PullState:
    merged = bool(pull.merged)
    return PullState(
        number=pull.number,
        url=pull.html_url,
        state="merged" if merged else pull.state,
        head_sha=pull.head.sha,
        branch=pull.head.ref,
        merged_by=pull.merged_by.login if merged and pull.merged_by else "",
        merge_sha=(pull.merge_commit_sha or "") if merged else "",
    )


def open_pull(forge: Forge, *, head: str, base: str, title: str, body: str) -> PullState:
    """The open pull request of `head` into `base`: the one there already (an attempt
    that died after opening it), or a new one. Raises ForgeError."""
    return _shown(forge, _open_pull(forge, head=head, base=base, title=title, body=body))


def read_pull(forge: Forge, number: int) -> PullState:
    """The pull request as the forge sees it now. Raises ForgeError."""
    return _shown(forge, _read_pull(forge, number))


def _shown(forge: Forge, pull: PullState) -> PullState:
    """The pull request with its web address only where Berth may link to it: http(s) on
    the forge's own host (GitHub's api. host answers for github.com); else none."""
    parts = urlsplit(pull.url)
    forge_host = (urlsplit(forge.api_url).hostname or "").lower()
    hosts = {forge_host, forge_host.removeprefix("api.")}
    if parts.scheme in ("https", "http") and (parts.hostname or "").lower() in hosts:
        return pull
    return replace(pull, url="")


def _open_pull(forge: Forge, *, head: str, base: str, title: str, body: str) -> PullState:
    if forge.kind == "gitlab":
        return _gitlab_open(forge, head=head, base=base, title=title, body=body)
    if forge.kind == "gitea":
        return _gitea_call(
            forge,
            "open a pull request",
            lambda c: _tea_state(c.open_pull(head=head, base=base, title=title, body=body)),
        )
    client = _client(forge)
    try:
        repo = client.get_repo(forge.repository)
        owner = forge.repository.split("/")[0]
        for pull in repo.get_pulls(state="open", head=f"{owner}:{head}", base=base):
            return state_of(pull)
        return state_of(repo.create_pull(base=base, head=head, title=title, body=body))
    except Exception as error:
        raise _failed(forge, "open a pull request", error) from None
    finally:
        client.close()


def _read_pull(forge: Forge, number: int) -> PullState:
    if forge.kind == "gitlab":
        return _gitlab_call(
            forge,
            f"read merge request !{number}",
            lambda p: _lab_state(p.mergerequests.get(number)),
        )
    if forge.kind == "gitea":
        return _gitea_call(
            forge, f"read pull request #{number}", lambda c: _tea_state(c.read_pull(number))
        )
    client = _client(forge)
    try:
        repo = client.get_repo(forge.repository)
        said = state_of(repo.get_pull(number))
        if said.state != "closed":
            return said
        # A pull request does not say who closed it; its issue does.
        closer = repo.get_issue(number).closed_by
        return replace(said, closed_by=closer.login if closer else "")
    except Exception as error:
        raise _failed(forge, f"read pull request #{number}", error) from None
    finally:
        client.close()


def may_write(forge: Forge) -> bool:
    """Whether the token may push to the repository, as the forge says (GitHub's
    `permissions.push`): what opening pull requests from Berth's branches needs. Raises
    ForgeError (no such repository, a refused token, no answer)."""
    if forge.kind == "gitlab":  # Developer (30) and above may push
        return _gitlab_call(forge, f"show {forge.repository}", _lab_may_write)
    if forge.kind == "gitea":  # Gitea's `permissions.push`, as GitHub's
        return _gitea_call(
            forge,
            f"show {forge.repository}",
            lambda c: bool((c.repository().get("permissions") or {}).get("push")),
        )
    client = _client(forge)
    try:
        permissions = client.get_repo(forge.repository).permissions
        return bool(permissions and permissions.push)
    except Exception as error:
        raise _failed(forge, f"show {forge.repository}", error) from None
    finally:
        client.close()


def _gitlab_call(forge: Forge, doing: str, call: Callable[[Any], T]) -> T:
    """`call` on the tenant's project, through python-gitlab."""
    _allowed(forge)
    client = gitlab.Gitlab(
        forge.api_url.rstrip("/"), private_token=forge.token, timeout=TIMEOUT_SECONDS
    )
    try:
        return call(client.projects.get(forge.repository))
    except Exception as error:  # PyGitlab and requests raise many kinds
        raise _failed(forge, doing, error) from None
    finally:
        client.session.close()


def _gitlab_open(forge: Forge, *, head: str, base: str, title: str, body: str) -> PullState:
    def opened(project: Any) -> PullState:
        for found in project.mergerequests.list(
            state="opened", source_branch=head, target_branch=base, get_all=False
        ):
            return _lab_state(found)
        made = project.mergerequests.create(
            {"source_branch": head, "target_branch": base, "title": title, "description": body}
        )
        return _lab_state(made)

    return _gitlab_call(forge, "open a merge request", opened)


def _lab_state(merge_request: Any) -> PullState:
    state = {"opened": "open", "merged": "merged"}.get(merge_request.state, "closed")
    merged_by = getattr(merge_request, "merged_by", None) or {}
    return PullState(
        number=merge_request.iid,
        url=merge_request.web_url,
        state=state,
        head_sha=merge_request.sha or "",
        branch=merge_request.source_branch,
        merged_by=merged_by.get("username", "") if state == "merged" else "",
        merge_sha=(getattr(merge_request, "merge_commit_sha", "") or "")
        if state == "merged"
        else "",
        closed_by=(getattr(merge_request, "closed_by", None) or {}).get("username", "")
        if state == "closed"
        else "",
    )


def _lab_may_write(project: Any) -> bool:
    permissions = getattr(project, "permissions", None) or {}
    levels = [
        (permissions.get(which) or {}).get("access_level", 0)
        for which in ("project_access", "group_access")
    ]
    return max(levels) >= 30


def _gitea_call(forge: Forge, doing: str, call: Callable[[GiteaClient], T]) -> T:
    """`call` with a client of the tenant's Gitea (or Forgejo) repository."""
    _allowed(forge)
    client = GiteaClient(forge.api_url, forge.repository, forge.token, TIMEOUT_SECONDS)
    try:
        return call(client)
    except (GiteaRefused, requests.RequestException, ValueError, KeyError, TypeError) as error:
        raise _failed(forge, doing, error) from None
    finally:
        client.close()


def _tea_state(pull: dict[str, Any]) -> PullState:
    merged = bool(pull.get("merged"))
    return PullState(
        number=int(pull["number"]),
        url=str(pull["html_url"]),
        state="merged" if merged else "open" if pull["state"] == "open" else "closed",
        head_sha=str(pull["head"]["sha"] or ""),
        branch=str(pull["head"]["ref"]),
        merged_by=str((pull.get("merged_by") or {}).get("login", "")) if merged else "",
        merge_sha=str(pull.get("merge_commit_sha") or "") if merged else "",
    )
