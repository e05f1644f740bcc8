"""Validators shared by models, forms and the REST API."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping

from django.conf import settings
from django.core.exceptions import ValidationError

from tenants.confusables import lookalike, mixed_scripts
from tenants.gitrepo import (
    RepositoryInputError,
    branch_problem,
    normalise_repo_path,
    parse_repo_url,
)
from tenants.naming import DNS_LABEL_MAX

_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")


def validate_dns_label(value: str) -> None:
    """RFC 1123 label, as Kubernetes requires for namespace names."""
    if len(value) > DNS_LABEL_MAX:
        raise ValidationError(
            "%(value)s is %(length)d characters; at most 63 are allowed.",
            code="too_long",
            params={"value": value, "length": len(value)},
        )
    if not _DNS_LABEL.fullmatch(value):
        raise ValidationError(
            "%(value)s must consist of lower-case letters, digits and '-', "
            "and start and end with a letter or digit.",
            code="invalid_dns_label",
            params={"value": value},
        )


def is_ssh_url(url: str) -> bool:
    """ssh://host/path or git's scp-like user@host:path (tenants.gitrepo reads it)."""
    try:
        return parse_repo_url(url.strip(), allow_insecure=True).scheme == "ssh"
    except RepositoryInputError:
        return False


def insecure_git_allowed() -> bool:
    """http://, git:// and file:// repositories: local development only (the setting)."""
    return bool(getattr(settings, "BERTH_GIT_ALLOW_INSECURE", False))


def validate_repo_url(value: str) -> None:
    """A GitOps repository URL Berth may hand to git (tenants.gitrepo says which), holding
    no credential."""
    if not value:
        return
    scheme, _, rest = value.partition("://")
    if scheme.lower() in ("https", "http") and "@" in rest.partition("/")[0]:
        # user:password, or a token as the user name: a credential, and the URL is stored
        # and shown in plain text. (A URL saved before this was refused still works: the
        # writer moves what it holds out of the URL, tests/provisioning/gitops.)
        raise ValidationError(
            "GitOps repository URL: it holds a login or token before '@', which would be "
            "stored in plain text; give https://host/org/repo.git and put the token (or "
            "user:token) in the repository credentials, which are encrypted.",
            code="credentials_in_repo_url",
        )
    try:
        parse_repo_url(value, allow_insecure=insecure_git_allowed())
    except RepositoryInputError as exc:
        raise ValidationError(f"GitOps repository URL: {exc}", code="invalid_repo_url") from None


def validate_branch(value: str) -> None:
    """A branch git takes as one (git check-ref-format --branch), with nothing a shell reads."""
    problem = branch_problem(value)
    if problem:
        raise ValidationError(f"GitOps branch: {problem}", code="invalid_branch")


def clean_repo_path(value: str) -> str:
    """The base path in the repository, normalised (what is stored), or ValidationError."""
    try:
        return normalise_repo_path(value)
    except RepositoryInputError as exc:
        raise ValidationError(f"GitOps base path: {exc}", code="invalid_repo_path") from None


def clean_gitops_fields(url: str, branch: str, path: str) -> str:
    """All three of a tenant's repository fields at once (Tenant.clean): ValidationError
    naming each bad field; else the normalised path."""
    errors: dict[str, ValidationError] = {}
    for field, check in (
        ("gitops_repo_url", lambda: validate_repo_url(url)),
        ("gitops_branch", lambda: validate_branch(branch)),
    ):
        try:
            check()
        except ValidationError as exc:
            errors[field] = exc
    try:
        path = clean_repo_path(path)
    except ValidationError as exc:
        errors["gitops_path"] = exc
    if errors:
        raise ValidationError(errors)
    return path


def known_hosts_problem(text: str) -> str | None:
    """Why `text` is not an OpenSSH known_hosts file (hosts, key type, key per line)."""
    lines = [
        line.strip()
        for line in text.splitlines()
        if line.strip() and not line.strip().startswith("#")
    ]
    for number, line in enumerate(lines, 1):
        fields = line.split()
        if fields and fields[0].startswith("@"):  # @cert-authority / @revoked markers
            fields = fields[1:]
        if len(fields) < 3 or not re.fullmatch(r"[A-Za-z0-9+/=]{16,}", fields[2]):
            return (
                f"line {number} is not a known_hosts line: expected `host key-type "
                "base64-key`, as `ssh-keyscan <host>` prints"
            )
    return None


GROUP_NAME_MAX = 200
GROUP_FIELDS = ("owner_groups", "member_groups", "viewer_groups")


def _listed(names: list[str]) -> str:
    return " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)


def group_name_problem(name: object, known: Iterable[str] = ()) -> str | None:
    """Why `name` cannot be an OIDC group Berth binds: printable text, no surrounding spaces,
    never a Kubernetes system group (a RoleBinding to `system:masters` would hand the
    namespace to every cluster admin's credential, or worse), never the platform admins'
    group (BERTH_PLATFORM_ADMIN_GROUPS) nor a name that looks like it or like one of `known`
    (TR39 skeletons), written in one script (TR39 mixed-script detection).

    Names are refused, not rewritten, unless already in Unicode's NFKC form: the identity
    provider sends a group's name as it is spelled there, and Berth compares them as they
    are, so a normalised name would no longer match the group it was meant to be."""
    if not isinstance(name, str) or not name:
        return "a group name is non-empty text"
    if len(name) > GROUP_NAME_MAX:
        return f"{name[:40]!r}… is {len(name)} characters; at most {GROUP_NAME_MAX}"
    if any(unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp") for char in name):
        return f"{name!r} holds control or invisible characters"
    if name != name.strip():
        return f"{name!r} starts or ends with spaces"
    if name.startswith("system:"):
        return f"{name!r} is a Kubernetes system group; tenants' groups may not be"
    normal = unicodedata.normalize("NFKC", name)
    if normal != name:
        return (
            f"{name!r} is written with compatibility or decomposed characters: write it "
            f"as {normal!r} (Unicode NFKC)"
        )
    platform = list(settings.BERTH_PLATFORM_ADMIN_GROUPS)
    if name in platform:
        return f"{name!r} is the platform admins' group; a tenant's groups never are"
    scripts = mixed_scripts(name)
    mixes = f" (mixes {_listed(scripts)})" if scripts else ""
    admins = lookalike(name, platform, ignore_case=True)
    if admins:
        return f"{name!r} looks like the platform admins' group {admins!r}{mixes}"
    other = lookalike(name, list(known))
    if other:
        return f"{name!r} looks like {other!r}{mixes}"
    if scripts:
        return f"{name!r} mixes {_listed(scripts)}; write a group's name in one script"
    return None


def validate_group_names(value: object, known: Iterable[str] = ()) -> None:
    """A list of group names (see group_name_problem); no two alike, none like one of
    `known`, the groups already in use elsewhere."""
    if not isinstance(value, list):
        raise ValidationError("Give a list of group names.", code="invalid")
    known = [*known, *(name for name in value if isinstance(name, str))]
    problems = [problem for name in value if (problem := group_name_problem(name, known))]
    if problems:
        raise ValidationError("; ".join(problems[:3]), code="invalid_group")
    if len(set(value)) != len(value):
        raise ValidationError("A group is listed twice.", code="duplicate_group")


def validate_tenant_groups(groups: Mapping[str, list[str]], others: Iterable[str]) -> None:
    """A tenant's groups by field (owner_groups, …), each field's checked against `others`
    (every other tenant's groups) and the tenant's groups in its other fields: a
    ValidationError naming each field refused."""
    others = list(others)
    errors: dict[str, ValidationError] = {}
    for field, names in groups.items():
        elsewhere = [
            name
            for other, listed in groups.items()
            if other != field
            for name in (listed if isinstance(listed, list) else [])
            if isinstance(name, str)
        ]
        try:
            validate_group_names(names, [*others, *elsewhere])
        except ValidationError as exc:
            errors[field] = exc
    if errors:
        raise ValidationError(errors)


def validate_commit_url_template(value: str) -> None:
    """A web page for one commit: an http(s) URL with `{sha}` where the commit goes."""
    if not value:
        return
    if not value.startswith(("https://", "http://")) or any(c.isspace() for c in value):
        raise ValidationError(
            "The commit link must be an http(s) URL without spaces, "
            "e.g. https://forge.example/org/repo/commit/{sha}.",
            code="invalid_commit_url",
        )
    if (
        value.count("{sha}") != 1
        or value.replace("{sha}", "").count("{")
        or value.replace("{sha}", "").count("}")
    ):
        raise ValidationError(
            "The commit link must hold {sha} once (and no other braces), "
            "e.g. https://forge.example/org/repo/commit/{sha}.",
            code="invalid_commit_url",
        )
