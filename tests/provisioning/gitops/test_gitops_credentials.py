"""How the GitOps writer reaches the tenant's repository: HTTPS with a token (git
http-backend on loopback), SSH with a deploy key, the credential kind by URL scheme, and never
a credential shown, logged or on a command line."""

from __future__ import annotations

import logging
import stat
import subprocess
from pathlib import Path

import pytest

from provisioning import gitops, reconcile
from provisioning.models import GitCommit
from tenants.choices import RequestState
from tenants.models import Tenant
from tests.support.gitops_world import TOKEN, gitops_step
from tests.support.gitserver import GitHttpServer, files_on
from tests.support.workflow import approved, converge


@pytest.fixture
def http_repo(repos):
    with GitHttpServer(repos, token=TOKEN) as server:
        yield server


def test_http_remote_with_a_token_is_written(writer_world, http_repo):
    Tenant.objects.filter(slug="payments").update(gitops_repo_url=http_repo.url("payments.git"))
    tenant = Tenant.objects.get(slug="payments")
    tenant.gitops_credentials = TOKEN
    tenant.save()
    writer_world["tenant"] = tenant

    tenancy_request = converge(approved(writer_world))

    assert tenancy_request.state == RequestState.READY, tenancy_request.status_message
    assert "apps/shop/dev/application.yaml" in files_on(writer_world["bare"])
    assert any(
        seen["method"] == "POST" and seen["path"].endswith("git-receive-pack")
        for seen in http_repo.seen
    )
    assert not any(TOKEN in seen["path"] + seen["query"] for seen in http_repo.seen)


def test_a_token_in_the_url_is_moved_out_of_it(writer_world, http_repo):
    url = http_repo.url("payments.git").replace("http://", f"http://ci-bot:{TOKEN}@")
    Tenant.objects.filter(slug="payments").update(gitops_repo_url=url, gitops_credentials="")
    writer_world["tenant"].refresh_from_db()

    tenancy_request = converge(approved(writer_world))

    assert tenancy_request.state == RequestState.READY, tenancy_request.status_message
    step = gitops_step(tenancy_request)
    assert TOKEN not in step["object"] + step["message"]
    recorded = GitCommit.objects.get(request=tenancy_request)
    assert TOKEN not in recorded.repo_url + recorded.diff + recorded.message
    assert TOKEN not in "".join(files_on(writer_world["bare"]).values())


def test_a_wrong_token_fails_at_once_and_no_credential_is_shown_or_logged(
    writer_world, http_repo, caplog
):
    wrong = "ghp_Wr0ngButSecretTokenValue1234"
    Tenant.objects.filter(slug="payments").update(
        gitops_repo_url=http_repo.url("payments.git").replace("http://", f"http://me:{wrong}@")
    )
    writer_world["tenant"].refresh_from_db()
    caplog.set_level(logging.DEBUG)

    tenancy_request = converge(approved(writer_world))

    assert tenancy_request.state == RequestState.FAILED
    step = gitops_step(tenancy_request)
    assert step["outcome"] == "failed" and step["attempts"] == 1  # not retried
    assert "refused the credentials Berth has" in step["message"]
    shown = tenancy_request.status_message + str(tenancy_request.runs.get().steps)
    logged = caplog.text
    for secret in (wrong, f"me:{wrong}"):
        assert secret not in shown
        assert secret not in logged


def test_the_token_never_appears_in_a_command_line(writer_world, http_repo, monkeypatch):
    Tenant.objects.filter(slug="payments").update(gitops_repo_url=http_repo.url("payments.git"))
    tenant = Tenant.objects.get(slug="payments")
    tenant.gitops_credentials = TOKEN
    tenant.save()
    commands = []
    real_run = subprocess.run

    def recording_run(args, *rest, **kwargs):
        commands.append(list(args))
        return real_run(args, *rest, **kwargs)

    monkeypatch.setattr(subprocess, "run", recording_run)  # git runs through it
    reconcile.write_gitops(request_id=approved(writer_world).pk)

    assert commands
    assert not any(TOKEN in " ".join(command) for command in commands)


def test_git_messages_are_redacted():
    secrets = ["s3cr3t-token-abcdef"]
    text = (
        "fatal: unable to access 'https://bot:s3cr3t-token-abcdef@git.example.com/r.git/': "
        "Authorization: Basic Ym90OnMzY3IzdA== was refused; token s3cr3t-token-abcdef"
    )
    cleaned = gitops.redact(text, secrets)
    assert "s3cr3t" not in cleaned and "Ym90OnMzY3IzdA" not in cleaned
    assert "git.example.com/r.git" in cleaned


def test_ssh_deploy_key_is_a_private_file_that_is_gone_afterwards(fast_git):
    key = (
        "-----BEGIN OPENSSH PRIVATE KEY-----\n"
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
        "-----END OPENSSH PRIVATE KEY-----"
    )
    # A host that resolves: a session checks where it would connect before anything else.
    remote = gitops.Remote.parse("git@localhost:team/gitops.git", credentials=key)
    assert remote.transport == "ssh"
    with gitops.session(remote, gitops.policy_from_settings()) as git:
        command = git.env["GIT_SSH_COMMAND"].split()
        key_file = Path(command[command.index("-i") + 1])
        assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
        assert key_file.read_text() == key + "\n"
        assert "IdentitiesOnly=yes" in command
        assert "StrictHostKeyChecking=accept-new" in command
        assert git.env["GIT_TERMINAL_PROMPT"] == "0"
        assert not any(
            "PRIVATE KEY" in value or "b3BlbnNz" in value
            for name, value in git.env.items()
            if name != "GIT_SSH_COMMAND"
        )
    assert not key_file.exists()


@pytest.mark.parametrize(
    ("url", "kind"),
    [
        ("https://git.example.com/team/gitops.git", "https"),
        ("ssh://git@git.example.com:2222/team/gitops.git", "ssh"),
        ("git@github.com:team/gitops.git", "ssh"),
        ("file:///srv/git/team.git", "file"),
        ("git://127.0.0.1:9418/team.git", "git"),
    ],
)
def test_the_credential_kind_follows_the_url_scheme(url, kind):
    assert gitops.Remote.parse(url).transport == kind


def test_an_unsupported_url_is_refused():
    with pytest.raises(gitops.GitError, match="refusing the GitOps repository URL.*not ftp://"):
        gitops.Remote.parse("ftp://git.example.com/team.git")
