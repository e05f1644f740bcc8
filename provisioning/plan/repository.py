"""The tenant's repository as its engines see it: URLs without credentials, in the form
each engine wants, and the directories Berth writes (docs/gitops-layout.md).
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

from provisioning.plan.model import TenantSpec

_SCP_LIKE = re.compile(r"^(?P<user>[^@/\s:]+@)?(?P<host>[^@/\s:]+):(?!//)(?P<path>.+)$")


def repo_root(path: str) -> str:
    """The tenant's base path in its repository, as a prefix ("" or "some/dir/")."""
    cleaned = path.strip().strip("/")
    if not cleaned:
        return ""
    parts = cleaned.split("/")
    if any(part in ("", ".", "..") or "\\" in part for part in parts):
        raise ValueError(
            f"GitOps base path {path!r} must be a relative path inside the repository "
            "(no '.', '..' or empty parts)"
        )
    return cleaned + "/"


def cluster_dir(tenant: TenantSpec, cluster: str, family: str) -> str:
    """What the tenant's root of one engine family (argocd, flux) on `cluster` applies:
    `<base>clusters/<cluster>/<family>` (no slash). One directory per engine, so neither
    root is handed the other's objects."""
    return f"{repo_root(tenant.repo_path)}clusters/{cluster}/{family}"


def public_url(url: str) -> str:
    """A repository URL fit to write into a file: never a password or token in it."""
    parts = urlsplit(url)
    if not parts.scheme or "@" not in parts.netloc:
        return url  # scp-like git@host:path carries a user name, never a secret
    userinfo, _, host = parts.netloc.rpartition("@")
    user = userinfo.split(":", 1)[0]
    # SSH names a login (git@); for HTTP(S) anything before @ is a credential.
    netloc = f"{user}@{host}" if parts.scheme == "ssh" and user else host
    return urlunsplit(parts._replace(netloc=netloc))


def flux_url(url: str) -> str:
    """Flux wants ssh:// where git accepts the scp-like form git@host:path."""
    url = public_url(url)
    match = _SCP_LIKE.match(url)
    if match and not urlsplit(url).scheme:
        return f"ssh://{match['user'] or ''}{match['host']}/{match['path']}"
    return url
