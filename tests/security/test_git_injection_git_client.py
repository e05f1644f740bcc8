"""Defence in depth against git injection: the git client refuses a hostile repository URL or
branch that is already in the database (or a remote changed after its checks) before git
runs, hands git a URL only after `--`, and git itself refuses transports Berth does not
allow."""

from __future__ import annotations

import subprocess

import pytest

from provisioning import gitops
from provisioning.gitops import GitError, Remote
from provisioning.gitops.remote import policy_from_settings
from provisioning.previews import check_repository
from provisioning.reconcile.proposals import gitops_remote
from tenants.models import Tenant
from tests.support.gitserver import init_bare
from tests.support.security_git import BRANCHES, HOSTILE_URLS, RUN

pytestmark = pytest.mark.usefixtures("production_git")


@pytest.mark.parametrize("url", [u for u in HOSTILE_URLS if "\x00" not in u])
def test_a_hostile_url_already_stored_is_refused_by_the_git_client(api_world, marker, url):
    Tenant.objects.filter(slug="search").update(gitops_repo_url=url)  # around every form
    tenant = Tenant.objects.get(slug="search")

    with pytest.raises(GitError) as refused:
        gitops_remote(tenant)
    assert "refusing the GitOps repository URL" in refused.value.message
    check = check_repository(tenant)  # what onboarding and PATCH ask of the web process

    assert check.ok is False and "refusing" in check.message
    assert not marker.exists()


@pytest.mark.parametrize("branch", BRANCHES)
def test_a_hostile_branch_already_stored_is_refused_by_the_git_client(api_world, marker, branch):
    Tenant.objects.filter(slug="search").update(
        gitops_repo_url="https://git.example.com/search.git", gitops_branch=branch
    )

    with pytest.raises(GitError, match="refusing the GitOps branch"):
        gitops_remote(Tenant.objects.get(slug="search"))
    assert not marker.exists()


def test_a_remote_changed_after_its_checks_is_refused_before_git_runs(marker):
    remote = Remote.parse("https://git.example.com/search.git")
    object.__setattr__(remote, "url", f"--upload-pack={RUN};x:y")  # as if built around them

    with pytest.raises(GitError, match="refusing"):
        gitops.probe(remote)
    assert not marker.exists()


@pytest.fixture
def git_argv(monkeypatch) -> list[list[str]]:
    """Every command line started meanwhile (the git client's among them)."""
    seen: list[list[str]] = []
    real_run, real_popen = subprocess.run, subprocess.Popen

    def run(argv, *args, **kwargs):
        seen.append(list(argv))
        return real_run(argv, *args, **kwargs)

    def popen(argv, *args, **kwargs):
        seen.append(list(argv))
        return real_popen(argv, *args, **kwargs)

    monkeypatch.setattr(subprocess, "run", run)
    monkeypatch.setattr(subprocess, "Popen", popen)
    return seen


def test_git_is_handed_the_url_only_after_a_double_dash(db, settings, tmp_path, git_argv):
    settings.BERTH_GIT_ALLOW_INSECURE = True
    bare = init_bare(tmp_path / "repo.git")
    remote = Remote.parse(bare.as_uri())
    git_argv.clear()  # only what Berth's git client runs from here

    gitops.probe(remote)
    gitops.read_files(remote, ["apps"])
    gitops.write(
        remote,
        lambda work: gitops.Proposal(current={}, files={"apps/a.yaml": "a: 1\n"}, message="Add a"),
    )

    with_url = [argv for argv in git_argv if remote.url in argv]
    assert {argv[1] for argv in with_url} == {"ls-remote", "remote"}
    for argv in with_url:
        assert "--" in argv and argv.index("--") < argv.index(remote.url), argv
    # fetch and push name the configured remote, never its URL, after `--` too.
    network = [argv for argv in git_argv if argv[1] in ("fetch", "push")]
    assert {argv[1] for argv in network} == {"fetch", "push"}
    for argv in network:
        assert argv[argv.index("--") + 1] == "origin", argv


def test_git_itself_refuses_transports_berth_does_not_allow(db, tmp_path):
    """git's own protocol allow-list in Berth's sessions: with insecure git off, git
    refuses file:// even if such a URL got past every check."""
    bare = init_bare(tmp_path / "repo.git")
    remote = Remote.parse("https://127.0.0.1:9/search.git")

    with gitops.session(remote, policy_from_settings()) as git:
        listed = git.run("ls-remote", "--", bare.as_uri(), cwd=tmp_path, check=False)

    assert listed.returncode != 0
    assert "transport 'file' not allowed" in listed.stderr
