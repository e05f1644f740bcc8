"""What the git injection tests share (tests/security/test_git_injection_*.py; their fixtures
`production_git` and `marker` are in tests/security/conftest.py): the hostile repository
URLs, branches and base paths, and how a refusal must read. Hostile values write
`$HOME.pwned` when a shell runs them: git's HOME is Berth's `<data dir>/gitops/home`, so the
marker would be `<data dir>/gitops/home.pwned`."""

from __future__ import annotations

import pytest

from tenants.models import Tenant

RUN = "touch${IFS}$HOME.pwned"  # what each injection tries to run

HOSTILE_URLS = [
    f"--upload-pack={RUN};x:y",  # scp-like to the old pattern: an option to git ls-remote
    "--upload-pack=touch $HOME.pwned;x:y",
    f"-oProxyCommand={RUN}",
    f"ssh://-oProxyCommand={RUN}/org/repo.git",
    f"ssh://%2DoProxyCommand={RUN}/org/repo.git",
    "ext::sh -c touch% $HOME.pwned",
    f"ext::sh${{IFS}}-c${{IFS}}{RUN}",
    f"host;{RUN}:org/repo.git",
    f"git@host:$({RUN})",
    f"git@host:`{RUN}`",
    f"https://git.example.com/org/repo.git\n--upload-pack={RUN}",
    "https://git.example.com/org/repo.git\x00",
    "https://git.example.com/org/my repo.git",
    "https://git.example.com/org/repo.git --upload-pack=touch",
    "https://-git.example.com/org/repo.git",
    "-x",
    # Insecure transports are off unless the operator turns them on.
    "file:///etc",
    "git://git.example.com/org/repo.git",
    "http://git.example.com/org/repo.git",
]
HOSTILE_BRANCHES = [
    "-x",
    "--upload-pack=id",
    f"--upload-pack={RUN}",
    "main;id",
    f"main;{RUN}",
    "main\nx",
    "main\x00",
    "main x",
    "../../x",
    f"$({RUN})",
    f"`{RUN}`",
]
HOSTILE_PATHS = [
    "../../etc",
    "/abs",
    "/etc/passwd",
    "clusters/../../x",
    "..",
    "a\\..\\b",
    "a\nb",
    "a\x00b",
    f"$({RUN})",
    "-rf",
    "clusters/.git/hooks",
]
FIELDS = {
    "gitops_repo_url": HOSTILE_URLS,
    "gitops_branch": HOSTILE_BRANCHES,
    "gitops_path": HOSTILE_PATHS,
}
# A branch name only git's own rules refuse: checking it runs git (check-ref-format).
GIT_CHECKED_BRANCHES = frozenset({"../../x"})


def _marks(field: str, value: str) -> list:
    asks_git = field == "gitops_branch" and value in GIT_CHECKED_BRANCHES
    return [pytest.mark.processes] if asks_git else []


CORPUS = [
    pytest.param(field, value, id=f"{field}={value!r}", marks=_marks(field, value))
    for field, values in FIELDS.items()
    for value in values
]
BRANCHES = [
    pytest.param(branch, id=branch, marks=_marks("gitops_branch", branch))
    for branch in HOSTILE_BRANCHES
    if "\x00" not in branch
]
# The onboarding page's names for the same fields.
FORM_FIELD = {"gitops_repo_url": "repo_url", "gitops_branch": "branch", "gitops_path": "path"}
REPOSITORY = ("gitops_repo_url", "gitops_branch", "gitops_path")


def messages_for(errors: dict, field: str) -> list[str]:
    return [message for key, said in errors.items() if key == field for message in said]


def names_the_field(messages: list[str]) -> bool:
    """Each message says which setting it refuses, or is the refusal of control characters
    that every page form attaches to the field holding one (tenants.forms.base)."""
    return bool(messages) and all(
        "GitOps" in message
        or "Null characters" in message
        or "holds a control character" in message
        for message in messages
    )


def stored(slug: str) -> dict:
    return Tenant.objects.filter(slug=slug).values(*REPOSITORY).get()
