"""A tenant's GitOps repository URL, branch and base path never reach git as an option, a
shell or a path outside the repository: refused with a message naming the field at every
door (REST API onboarding and PATCH, the onboarding page, the Django admin, Tenant.clean),
nothing stored, nothing run; and the git client refuses a hostile value that is already in
the database.

Hostile values write `$HOME.pwned` when a shell runs them: git's HOME is Berth's
`<data dir>/gitops/home`, so the marker would be `<data dir>/gitops/home.pwned`.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from django.core.exceptions import ValidationError

from provisioning import gitops
from provisioning.gitops import GitError, Remote
from provisioning.gitops.remote import policy_from_settings
from provisioning.jobs.proposals import gitops_remote
from provisioning.previews import check_repository
from tenants.models import AuditEvent, Request, Tenant, User
from tests.support.api import api, assert_problem
from tests.support.gitserver import init_bare

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
CORPUS = [(field, value) for field, values in FIELDS.items() for value in values]
CORPUS_IDS = [f"{field}={value!r}" for field, value in CORPUS]
# The onboarding page's names for the same fields.
FORM_FIELD = {"gitops_repo_url": "repo_url", "gitops_branch": "branch", "gitops_path": "path"}
REPOSITORY = ("gitops_repo_url", "gitops_branch", "gitops_path")


@pytest.fixture(autouse=True)
def production_git(settings, tmp_path):
    """Insecure transports off, as in production; git's HOME in this test's data dir."""
    settings.BERTH_GIT_ALLOW_INSECURE = False
    settings.DATA_DIR = tmp_path
    settings.BERTH_GIT_MAX_ATTEMPTS = 1
    return settings


@pytest.fixture
def marker(tmp_path) -> Path:
    return tmp_path / "gitops" / "home.pwned"


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


# --- the REST API ---------------------------------------------------------------------------


@pytest.mark.parametrize(("field", "value"), CORPUS, ids=CORPUS_IDS)
def test_onboarding_over_the_api_refuses_a_hostile_repository_value(world, marker, field, value):
    body = {
        "slug": "ledger",
        "name": "Ledger",
        "allowed_clusters": ["sandbox"],
        "gitops_repo_url": "https://git.example.com/ledger.git",
        field: value,
    }

    response = api(world.admin).post("/api/v1/tenants/", body, format="json")

    errors = assert_problem(response, 400, "validation-error")["errors"]
    assert names_the_field(messages_for(errors, field)), errors
    assert not Tenant.objects.filter(slug="ledger").exists()
    assert not AuditEvent.objects.filter(action="tenant.onboard").exists()
    assert not marker.exists()


@pytest.mark.parametrize(("field", "value"), CORPUS, ids=CORPUS_IDS)
def test_a_patch_with_a_hostile_repository_value_changes_nothing_and_runs_nothing(
    world, marker, field, value
):
    before = stored("search")
    requests = Request.objects.count()

    response = api(world.admin).patch("/api/v1/tenants/search/", {field: value}, format="json")

    errors = assert_problem(response, 400, "validation-error")["errors"]
    assert names_the_field(messages_for(errors, field)), errors
    assert stored("search") == before
    assert Request.objects.count() == requests  # no sync asked for
    assert not AuditEvent.objects.filter(action="tenant.update").exists()
    assert not marker.exists()


def test_the_reported_injection_is_refused_and_git_never_sees_it(world, marker):
    """The finding as reported: a platform admin PATCHes the search tenant's URL."""
    response = api(world.admin).patch(
        "/api/v1/tenants/search/",
        {"gitops_repo_url": "--upload-pack=id>$HOME.id;x:y"},
        format="json",
    )

    errors = assert_problem(response, 400)["errors"]
    assert "option" in " ".join(errors["gitops_repo_url"])
    assert stored("search")["gitops_repo_url"] == ""
    assert not list((marker.parent.parent).glob("**/*.id"))


def test_a_good_repository_is_taken_with_its_path_normalised(world):
    response = api(world.admin).patch(
        "/api/v1/tenants/search/",
        {
            "gitops_repo_url": "git@git.example.com:search/deploy.git",
            "gitops_branch": "release/2026.1",
            "gitops_path": "./clusters//prod/",
        },
        format="json",
    )

    assert response.status_code == 200, response.json()
    assert stored("search") == {
        "gitops_repo_url": "git@git.example.com:search/deploy.git",
        "gitops_branch": "release/2026.1",
        "gitops_path": "clusters/prod",
    }


def test_a_local_repository_url_needs_the_operator_to_allow_insecure_git(world, settings):
    url = "http://127.0.0.1:8002/search.git"
    refused = api(world.admin).patch(
        "/api/v1/tenants/payments/", {"gitops_repo_url": url}, format="json"
    )
    assert "BERTH_GIT_ALLOW_INSECURE" in " ".join(
        assert_problem(refused, 400)["errors"]["gitops_repo_url"]
    )

    settings.BERTH_GIT_ALLOW_INSECURE = True
    taken = api(world.admin).patch(
        "/api/v1/tenants/payments/", {"gitops_repo_url": url}, format="json"
    )
    assert taken.status_code == 200, taken.json()


# --- the onboarding page and the admin ---------------------------------------------------------


@pytest.mark.parametrize(("field", "value"), CORPUS, ids=CORPUS_IDS)
def test_the_onboarding_page_refuses_a_hostile_repository_value(
    client, world, marker, field, value
):
    client.force_login(world.admin)
    form = {
        "slug": "ledger",
        "name": "Ledger team",
        "repo_url": "https://git.example.com/l.git",
        "branch": "main",
        "path": "",
        "engine": "argocd",
        "cpu": "4",
        "memory": "8Gi",
        "storage": "50Gi",
        "namespaces": 5,
        FORM_FIELD[field]: value,
    }

    response = client.post("/tenants/new/", form)

    assert response.status_code == 200  # the form again, with the error
    said = response.context["form"].errors.get(FORM_FIELD[field])
    assert said and names_the_field(list(said)), response.context["form"].errors
    assert not Tenant.objects.filter(slug="ledger").exists()
    assert not marker.exists()


@pytest.fixture
def superuser(db):
    return User.objects.create_superuser("root", "root@example.com", "break-glass-password")


def admin_add_form(**fields: str) -> dict:
    """Everything the admin's "add tenant" page posts, no memberships."""
    return {
        "slug": "ledger",
        "name": "Ledger team",
        "owner_groups": "[]",
        "member_groups": "[]",
        "viewer_groups": "[]",
        "gitops_repo_url": "https://git.example.com/ledger.git",
        "gitops_branch": "main",
        "gitops_path": "",
        "gitops_credentials": "",
        "gitops_known_hosts": "",
        "gitops_engine": "argocd",
        "gitops_commit_url": "",
        "budget_cpu_millis": "8000",
        "budget_memory_mib": "16384",
        "budget_storage_gib": "100",
        "budget_namespaces": "10",
        "allowed_domains": "[]",
        "notify_emails": "[]",
        "webhook_url": "",
        "webhook_secret": "",
        "memberships-TOTAL_FORMS": "0",
        "memberships-INITIAL_FORMS": "0",
        "memberships-MIN_NUM_FORMS": "0",
        "memberships-MAX_NUM_FORMS": "1000",
        **fields,
    }


def test_the_admin_adds_a_tenant_with_a_good_repository(client, superuser):
    client.force_login(superuser)
    response = client.post(
        "/admin/tenants/tenant/add/", admin_add_form(gitops_path="clusters/./prod/")
    )
    assert response.status_code == 302, response.context["adminform"].form.errors
    assert stored("ledger")["gitops_path"] == "clusters/prod"


@pytest.mark.parametrize(("field", "value"), CORPUS, ids=CORPUS_IDS)
def test_the_admin_refuses_a_hostile_repository_value(client, superuser, marker, field, value):
    client.force_login(superuser)

    response = client.post("/admin/tenants/tenant/add/", admin_add_form(**{field: value}))

    assert response.status_code == 200
    said = response.context["adminform"].form.errors.get(field)
    assert said and names_the_field(list(said)), response.context["adminform"].form.errors
    assert not Tenant.objects.filter(slug="ledger").exists()
    assert not marker.exists()


@pytest.mark.parametrize(("field", "value"), CORPUS, ids=CORPUS_IDS)
def test_the_model_refuses_a_hostile_repository_value_whoever_saves_it(world, field, value):
    tenant = Tenant.objects.get(slug="search")
    setattr(tenant, field, value)

    with pytest.raises(ValidationError) as refused:
        tenant.full_clean()

    assert field in refused.value.message_dict, refused.value
    assert names_the_field(refused.value.message_dict[field])


# --- defence in depth: a hostile value already in the database ---------------------------------


@pytest.mark.parametrize("url", [u for u in HOSTILE_URLS if "\x00" not in u])
def test_a_hostile_url_already_stored_is_refused_by_the_git_client(world, marker, url):
    Tenant.objects.filter(slug="search").update(gitops_repo_url=url)  # around every form
    tenant = Tenant.objects.get(slug="search")

    with pytest.raises(GitError) as refused:
        gitops_remote(tenant)
    assert "refusing the GitOps repository URL" in refused.value.message
    check = check_repository(tenant)  # what onboarding and PATCH ask of the web process

    assert check.ok is False and "refusing" in check.message
    assert not marker.exists()


@pytest.mark.parametrize("branch", [b for b in HOSTILE_BRANCHES if "\x00" not in b])
def test_a_hostile_branch_already_stored_is_refused_by_the_git_client(world, marker, branch):
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
