"""A forge stand-in over the project's git server (pushes there are what the forge sees),
with one repository its user administers, for the forge's own tests and merge-request
mode's (tests/forgesandbox/, tests/provisioning/pull_requests/)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from github import Auth, Github

from forgesandbox import ForgeSandbox
from portal.gitserver import GitHttpServer


@contextmanager
def forge_over_git(
    tmp_path: Path, *, token: str, repo: str, validate: bool, reviewer: str | None = None
) -> Iterator[ForgeSandbox]:
    """`validate`: every GitHub request and answer checked against GitHub's description
    (which must be there); the GitLab and Gitea routes need none. `reviewer`: a user with
    write access, to merge and close as a person would."""
    root = tmp_path / "forge"
    root.mkdir()
    with (
        GitHttpServer(root, token=token) as git_server,
        ForgeSandbox(root, git_url=git_server.base_url, token=token, validate=validate) as forge,
    ):
        forge.create_repo(repo)
        forge.grant(repo, forge.user, "admin")
        if reviewer:
            forge.add_user(reviewer)
            forge.grant(repo, reviewer, "write")
        yield forge


def github_client(forge: ForgeSandbox, token: str, **options: object) -> Github:
    """PyGithub against the stand-in: no retries (PyGithub retries 5xx by default, which
    would hide a stand-in's 500), and none of the pause it keeps between calls to spare
    github.com (a quarter second between requests, a second between writes)."""
    return Github(
        base_url=forge.api_url,
        auth=Auth.Token(token),
        retry=None,
        seconds_between_requests=0,
        seconds_between_writes=0,
        **options,  # type: ignore[arg-type]
    )
