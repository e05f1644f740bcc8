"""A tenant's forge through its REST API (PyGithub: GitHub and GitHub Enterprise): open a
pull request for a branch Berth pushed, read its state. I/O and nothing else; the token
never appears in a message or a log line."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlsplit

from github import Auth, Github, GithubException
from github.PullRequest import PullRequest as GithubPull

from provisioning.gitops.remote import redact
from tenants.egress import EgressRefused, Unresolvable, check_host

TIMEOUT_SECONDS = 20


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
    api_url: str
    repository: str  # owner/name
    token: str = field(default="", repr=False)


@dataclass(frozen=True)
class PullState:
    number: int
    url: str
    state: str  # open | merged | closed
    head_sha: str
    branch: str = ""  # its head branch
    merged_by: str = ""
    merge_sha: str = ""


def repository_of(repo_url: str) -> str:
    """owner/name of a repository's clone URL (https://host/owner/name.git, git@host:o/n)."""
    path = urlsplit(repo_url).path if "://" in repo_url else repo_url.partition(":")[2]
    parts = [part for part in path.removesuffix(".git").split("/") if part]
    return "/".join(parts[-2:])


def _client(forge: Forge) -> Github:
    parts = urlsplit(forge.api_url)
    try:
        check_host(parts.hostname or "", parts.port or (443 if parts.scheme == "https" else 80))
    except (EgressRefused, Unresolvable) as refused:
        raise ForgeError(f"the forge's API URL is refused: {refused}", transient=False) from None
    return Github(
        base_url=forge.api_url.rstrip("/"),
        auth=Auth.Token(forge.token),
        timeout=TIMEOUT_SECONDS,
        retry=None,
    )


def _failed(forge: Forge, doing: str, error: Exception) -> ForgeError:
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


def read_pull(forge: Forge, number: int) -> PullState:
    """The pull request as the forge sees it now. Raises ForgeError."""
    client = _client(forge)
    try:
        return state_of(client.get_repo(forge.repository).get_pull(number))
    except Exception as error:
        raise _failed(forge, f"read pull request #{number}", error) from None
    finally:
        client.close()


def may_write(forge: Forge) -> bool:
    """Whether the token may push to the repository, as the forge says (GitHub's
    `permissions.push`): what opening pull requests from Berth's branches needs. Raises
    ForgeError (no such repository, a refused token, no answer)."""
    client = _client(forge)
    try:
        permissions = client.get_repo(forge.repository).permissions
        return bool(permissions and permissions.push)
    except Exception as error:
        raise _failed(forge, f"show {forge.repository}", error) from None
    finally:
        client.close()
