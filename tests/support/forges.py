"""A forge stand-in over the project's git server (pushes there are what the forge sees),
with one repository its user administers, for the forge's own tests and merge-request
mode's (tests/forgesandbox/, tests/provisioning/pull_requests/)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

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
