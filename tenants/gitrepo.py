"""A tenant's GitOps repository as people type it: its URL, branch and base path, checked
before anything stores them or hands them to git.

One parser for every boundary: the onboarding form, the REST API, the admin and
`Tenant.clean()` (through `tenants.validators`), and the git client itself
(`provisioning.gitops.remote`), which refuses a bad value even if one was stored before
these checks existed. Pure on purpose (no Django, no models), so the git client may use it
without reading tenants' records; the caller says whether the insecure transports are
allowed (the setting `BERTH_GIT_ALLOW_INSECURE`).

Allowed: `https://`, `ssh://` and git's scp-like `user@host:path`; with the opt-in also
`http://`, `git://` and `file://`. Hosts are hostnames or IP addresses. Nothing a shell,
git or ssh could read as syntax or as an option is accepted anywhere: no leading `-`, no
whitespace or control characters, no shell metacharacters, no `transport::address`
remote helpers (`ext::sh -c ...`).
"""

from __future__ import annotations

import functools
import ipaddress
import os
import posixpath
import re
import subprocess
import tempfile
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

SECURE_SCHEMES = ("https", "ssh")
INSECURE_SCHEMES = ("http", "git", "file")
BRANCH_MAX = 200
PATH_MAX = 300
URL_MAX = 500

EXAMPLES = (
    "https://git.example.com/org/repo.git, ssh://git@git.example.com/org/repo.git "
    "or git@git.example.com:org/repo.git"
)

_HOSTNAME = re.compile(
    r"(?=.{1,253}\.?\Z)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?"
)
# Every pattern here is matched whole (fullmatch): `$` would let a final newline through.
# What may follow a scheme: unreserved characters, percent-encoding, and the few separators
# repository URLs use. No shell metacharacter ; & | $ ` < > ( ) ' " \ ! * ? { } ^ # or space.
_URL_CHARS = re.compile(r"[A-Za-z0-9._~%+=:@,/\[\]-]+")
_USER = re.compile(r"[A-Za-z0-9._~%+=-]+")
_PATH = re.compile(r"[A-Za-z0-9._~%+=:@,/-]*")
# git's scp-like syntax: [user@]host:path, where host holds no '/' or ':' (git reads a ':'
# after the first '/' as part of a local path instead).
_SCP_LIKE = re.compile(r"(?:(?P<user>[^@/:]+)@)?(?P<host>[^@/:]+):(?P<path>.*)")
_BRANCH = re.compile(r"[A-Za-z0-9._/+-]+")
_REPO_PATH = re.compile(r"[A-Za-z0-9._~/+=@,-]+")


class RepositoryInputError(ValueError):
    """Why a repository URL, branch or base path is refused, in words for whoever typed it."""


@dataclass(frozen=True)
class RepoURL:
    """A repository URL Berth may hand to git, in parts."""

    url: str
    scheme: str  # https | ssh | http | git | file (the scp-like form is ssh)
    host: str  # "" for file://
    user: str = ""  # the login of an SSH URL, or what is before @ in an http(s) URL
    port: int | None = None
    path: str = ""
    scp_like: bool = False

    @property
    def insecure(self) -> bool:
        return self.scheme in INSECURE_SCHEMES


def _control_or_space(text: str) -> bool:
    return any(ord(char) < 0x21 or ord(char) == 0x7F for char in text)


def _host_ok(host: str) -> bool:
    if host.startswith("[") and host.endswith("]"):
        try:
            return ipaddress.ip_address(host[1:-1]).version == 6
        except ValueError:
            return False
    if _HOSTNAME.fullmatch(host):
        return True
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _path_ok(path: str) -> bool:
    """git decodes %xx in URLs before it uses them: the path is checked as typed and as
    git reads it."""
    return all(
        _PATH.fullmatch(form) and not any(part.startswith("-") for part in form.split("/"))
        for form in (path, unquote(path))
    )


def _login_ok(login: str) -> bool:
    return all(
        _USER.fullmatch(form) and not form.startswith("-") for form in (login, unquote(login))
    )


def parse_repo_url(url: str, *, allow_insecure: bool) -> RepoURL:
    """The URL in parts, or RepositoryInputError saying what is wrong with it."""
    if not isinstance(url, str) or not url:
        raise RepositoryInputError("Give the repository's URL.")
    if len(url) > URL_MAX:
        raise RepositoryInputError(f"The URL is {len(url)} characters; at most {URL_MAX}.")
    if _control_or_space(url) or not url.isascii():
        raise RepositoryInputError(
            "The URL holds spaces, control or non-ASCII characters; a repository URL has none."
        )
    if url.startswith("-"):
        raise RepositoryInputError(
            "The URL starts with '-', which git would read as an option: " + EXAMPLES + "."
        )
    if not _URL_CHARS.fullmatch(url):
        raise RepositoryInputError(
            "The URL holds characters a repository URL never needs (such as ; | & $ ` ' \" "
            "( ) < > \\ ! * ? { } #): " + EXAMPLES + "."
        )
    if "::" in re.sub(r"\[[^\]]*\]", "", url):
        raise RepositoryInputError(
            "'<transport>::<address>' makes git run a program of its own; give the "
            "repository's " + EXAMPLES + "."
        )
    if "://" not in url:
        return _scp_like(url)
    scheme = url.split("://", 1)[0]
    if scheme not in SECURE_SCHEMES + INSECURE_SCHEMES:
        raise RepositoryInputError(
            f"Berth reads repositories over https:// and SSH only, not {scheme}://: "
            + EXAMPLES
            + "."
        )
    if scheme in INSECURE_SCHEMES and not allow_insecure:
        raise RepositoryInputError(
            f"{scheme}:// repositories are turned off here (they are for local development "
            "with BERTH_GIT_ALLOW_INSECURE): " + EXAMPLES + "."
        )
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise RepositoryInputError(f"The URL cannot be read: {exc}.") from None
    if parts.query or parts.fragment or url.endswith(("?", "#")):
        raise RepositoryInputError("A repository URL has no ?query or #fragment.")
    if not _path_ok(parts.path):
        raise RepositoryInputError(
            "The repository's path holds characters git or a shell would read as syntax."
        )
    userinfo, _, hostport = parts.netloc.rpartition("@")
    if scheme == "file":
        if hostport not in ("", "localhost") or userinfo:
            raise RepositoryInputError(
                "A file:// URL names a path on this machine only: file:///path/to/repo.git."
            )
        if not parts.path.startswith("/") or parts.path == "/":
            raise RepositoryInputError(
                "Give the repository's absolute path: file:///path/to/repo.git."
            )
        return RepoURL(url=url, scheme=scheme, host="", path=parts.path)
    host = (
        hostport[: hostport.index("]") + 1]
        if hostport.startswith("[")
        else hostport.partition(":")[0]
    )
    if port is not None and not 0 < port < 65536:
        raise RepositoryInputError("The URL's port is not between 1 and 65535.")
    if not host or not _host_ok(host):
        raise RepositoryInputError(
            "The URL's host must be a hostname or an IP address: " + EXAMPLES + "."
        )
    user = ""
    if userinfo:
        login, _, secret = userinfo.partition(":")
        if scheme in ("ssh", "git") and secret:
            raise RepositoryInputError(
                "An SSH URL names a login, never a password: ssh://git@host/org/repo.git "
                "(the deploy key goes in the credentials)."
            )
        if not all(_USER.fullmatch(item) for item in filter(None, (login, secret))) or (
            not _login_ok(login)
        ):
            raise RepositoryInputError("The URL's user name holds characters a login never needs.")
        user = login
    if parts.path in ("", "/"):
        raise RepositoryInputError(
            "The URL names a host but no repository on it: " + EXAMPLES + "."
        )
    return RepoURL(url=url, scheme=scheme, host=host, user=user, port=port, path=parts.path)


def _scp_like(url: str) -> RepoURL:
    match = _SCP_LIKE.fullmatch(url)
    if not match:
        raise RepositoryInputError(
            "That is not a repository URL Berth can use (a local path is not): " + EXAMPLES + "."
        )
    user, host, path = match["user"] or "", match["host"], match["path"]
    if user and not _login_ok(user):
        raise RepositoryInputError("The login before '@' holds characters a login never needs.")
    if not _host_ok(host):
        raise RepositoryInputError(
            "The host before ':' must be a hostname or an IP address: " + EXAMPLES + "."
        )
    if not path or path.startswith(":") or not _path_ok(path):
        raise RepositoryInputError(
            "Give the repository's path after 'host:', such as git@host:org/repo.git."
        )
    return RepoURL(url=url, scheme="ssh", host=host, user=user, path=path, scp_like=True)


def branch_problem(name: str) -> str | None:
    """Why git (or a shell) should never be handed `name` as a branch, or None."""
    if not isinstance(name, str) or not name:
        return "Give a branch name, such as main."
    if len(name) > BRANCH_MAX:
        return f"The branch name is {len(name)} characters; at most {BRANCH_MAX}."
    if _control_or_space(name) or not name.isascii():
        return "A branch name holds no spaces, control or non-ASCII characters."
    if name.startswith("-"):
        return "A branch name never starts with '-' (git would read it as an option)."
    if not _BRANCH.fullmatch(name):
        return (
            "A branch name here is letters, digits and . _ / + - only (no shell "
            "metacharacters such as ; $ ` | &)."
        )
    if not _git_takes_branch(name):
        return f"git does not take {name!r} as a branch name (git check-ref-format --branch)."
    return None


@functools.lru_cache(maxsize=256)
def _git_takes_branch(name: str) -> bool:
    """git's own rules for branch names. `name` starts with no '-' (checked first), so git
    cannot read it as an option; run outside any repository, with no user config."""
    with tempfile.TemporaryDirectory(prefix="berth-ref-") as home:
        checked = subprocess.run(  # noqa: S603 - fixed argv; `name` checked above, no shell
            ["git", "check-ref-format", "--branch", name],  # noqa: S607 - git from PATH
            cwd=home,
            env={
                "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                "HOME": home,
                "GIT_CONFIG_NOSYSTEM": "1",
                "GIT_CONFIG_GLOBAL": os.devnull,
                "GIT_CEILING_DIRECTORIES": home,
                "LC_ALL": "C",
            },
            capture_output=True,
            timeout=10,
            check=False,
        )
    return checked.returncode == 0


def normalise_repo_path(path: str) -> str:
    """The base path as it is stored: relative, normalised ("a/b", never "./a/b/"), inside
    the repository; "" for its root. RepositoryInputError otherwise."""
    if not isinstance(path, str):
        raise RepositoryInputError("Give the base path as text.")
    if not path:
        return ""
    if len(path) > PATH_MAX:
        raise RepositoryInputError(f"The path is {len(path)} characters; at most {PATH_MAX}.")
    if _control_or_space(path) or not path.isascii():
        raise RepositoryInputError("The path holds spaces, control or non-ASCII characters.")
    if "\\" in path:
        raise RepositoryInputError("Separate the path's directories with '/', not '\\'.")
    if path.startswith("/"):
        raise RepositoryInputError(
            "The path is relative to the repository's root: clusters/prod, not /clusters/prod."
        )
    parts = path.split("/")
    if ".." in parts:
        raise RepositoryInputError("The path stays inside the repository: no '..' in it.")
    if not _REPO_PATH.fullmatch(path) or any(part.startswith("-") for part in parts):
        raise RepositoryInputError(
            "A base path here is letters, digits and . _ ~ + = @ , - separated by '/' "
            "(no part starting with '-')."
        )
    normal = posixpath.normpath(path)
    if normal == ".":
        return ""
    if ".git" in normal.split("/"):
        raise RepositoryInputError("The path cannot go into the repository's .git directory.")
    return normal
