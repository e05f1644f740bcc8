"""Repositories Berth runs git against go only where they should. A repository URL is typed
by a person; Berth must not run git against its own network for them (loopback, cloud
metadata, private ranges, over every network transport) unless the operator allows that
network (BERTH_EGRESS_ALLOW), and git connects to the address that was checked. The
repository check runs in a worker, never in the request, its answer appears on the page and
in the API, and git's commands there have the short timeout of an answer someone waits
for."""

from __future__ import annotations

import socket
import threading

import pytest
from rest_framework.test import APIClient

from tenants import provisioner, tasks
from tenants.models import Tenant
from tests.support.factories import TenantFactory, UserFactory
from tests.support.gitserver import payments_repo_server
from tests.support.security_egress import resolving

TOKEN = "egress-test-token-0123456789"


def test_a_repository_on_a_refused_network_fails_its_check_before_git_runs(
    db, no_loopback, monkeypatch
):
    resolving(monkeypatch, {"github.internal": "10.0.0.5"})
    tenant = TenantFactory(slug="payments", gitops_repo_url="https://github.internal/org/x.git")
    check = provisioner.check_repository(tenant)
    assert check.ok is False
    assert (
        "github.internal resolves to 10.0.0.5, a private address; allow it with BERTH_EGRESS_ALLOW"
    ) in check.message


@pytest.mark.parametrize(
    "url",
    [
        "ssh://git@127.0.0.1:2222/org/gitops.git",
        "git@localhost:org/gitops.git",
        "ssh://git@[::1]/org/gitops.git",
        "git://169.254.169.254/gitops.git",
    ],
)
def test_every_network_transport_is_checked(db, no_loopback, url):
    tenant = TenantFactory(slug="payments", gitops_repo_url=url)
    check = provisioner.check_repository(tenant)
    assert check.ok is False
    assert "Berth does not connect there" in check.message


def test_a_writer_refuses_a_repository_on_a_refused_network_for_good(db, no_loopback):
    from provisioning import gitops

    remote = gitops.Remote.parse("https://127.0.0.1:9/org/gitops.git", credentials="t")
    with pytest.raises(gitops.GitError) as refused:
        gitops.read_files(remote, ["apps"])
    assert refused.value.transient is False  # not retried: waiting will not change it
    assert "a loopback address" in refused.value.message


def test_git_connects_to_the_address_that_was_checked(db):
    from provisioning import gitops

    policy = gitops.policy_from_settings()
    https = gitops.Remote.parse("https://localhost:8443/org/gitops.git", credentials="t")
    with gitops.session(https, policy) as git:
        config = {
            git.env[f"GIT_CONFIG_KEY_{i}"]: git.env[f"GIT_CONFIG_VALUE_{i}"]
            for i in range(int(git.env["GIT_CONFIG_COUNT"]))
        }
    assert config["http.curloptResolve"].startswith("localhost:8443:")
    assert "127.0.0.1" in config["http.curloptResolve"]

    ssh = gitops.Remote.parse("ssh://git@localhost:2222/org/gitops.git")
    with gitops.session(ssh, policy) as git:
        command = git.env["GIT_SSH_COMMAND"].split()
    assert any(option in command for option in ("HostName=127.0.0.1", "HostName=::1"))
    assert "HostKeyAlias=localhost" in command  # known hosts stay filed under the name


def test_a_git_server_that_never_answers_fails_the_check_within_the_web_timeout(db, settings):
    settings.BERTH_GIT_WEB_TIMEOUT_SECONDS = 1
    settings.BERTH_GIT_TIMEOUT_SECONDS = 600  # the worker's patience must not apply here
    with socket.socket() as silent:  # the kernel accepts connections; nobody ever speaks
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        tenant = TenantFactory(
            slug="payments", gitops_repo_url=f"git://127.0.0.1:{silent.getsockname()[1]}/x"
        )
        found = []
        worker = threading.Thread(
            target=lambda: found.append(provisioner.check_repository(tenant)), daemon=True
        )
        worker.start()
        worker.join(timeout=120)  # hang protection only; the check stops itself long before
    assert not worker.is_alive(), "the repository check hung"
    (check,) = found
    assert check.ok is False
    assert "timed out" in check.message


# --- the repository check is a worker's task ---------------------------------------------------


@pytest.fixture
def git_server(tmp_path):
    with payments_repo_server(tmp_path, token=TOKEN) as running:
        yield running


def test_a_change_of_repository_is_checked_by_a_worker_and_its_answer_appears(
    admin_api, git_server, queued, client
):
    tenant = TenantFactory(slug="payments")
    response = admin_api.patch(
        "/api/v1/tenants/payments/",
        {"gitops_repo_url": git_server.url("payments.git"), "gitops_credentials": f"bot:{TOKEN}"},
        format="json",
    )
    assert response.status_code == 200, response.content
    assert response.json()["repository_check"] == {
        "status": "pending",
        "message": "Queued for a worker.",
        "checked_at": None,
    }
    assert git_server.seen == []  # git did not run in the request
    (call,) = queued

    client.force_login(UserFactory(username="ops", is_platform_admin=True))
    page = client.get("/tenants/payments/").content.decode()
    assert "Repository check:" in page and "pending…" in page
    assert 'data-poll="/tenants/payments/repository-check/"' in page

    assert tasks.check_repository(*call) is True  # what the worker does with the message
    shown = admin_api.get("/api/v1/tenants/payments/").json()["repository_check"]
    assert shown["status"] == "ok"
    assert "main is at" in shown["message"]
    assert shown["checked_at"]
    polled = client.get("/tenants/payments/repository-check/").content.decode()
    assert "ok</span>: " in polled and "main is at" in polled
    assert "data-poll" not in polled  # the page stops asking
    tenant.refresh_from_db()
    assert tenant.repository_check_ok is True


def test_a_failed_check_says_what_failed_and_an_older_answer_never_overwrites_a_newer(
    admin_api, git_server, queued
):
    TenantFactory(slug="payments")
    admin_api.patch(
        "/api/v1/tenants/payments/",
        {"gitops_repo_url": git_server.url("payments.git"), "gitops_credentials": "bot:wrong"},
        format="json",
    )
    admin_api.patch("/api/v1/tenants/payments/", {"gitops_branch": "release"}, format="json")
    first, second = queued

    assert tasks.check_repository(*first) is False  # superseded: nothing recorded
    assert (
        admin_api.get("/api/v1/tenants/payments/").json()["repository_check"]["status"] == "pending"
    )
    assert tasks.check_repository(*second) is True
    shown = admin_api.get("/api/v1/tenants/payments/").json()["repository_check"]
    assert shown["status"] == "failed"
    assert "refused the credentials" in shown["message"]
    assert "wrong" not in shown["message"].replace("wrong-", "")


def test_onboarding_on_the_page_queues_the_check_and_the_page_shows_it_pending(client, queued, db):
    client.force_login(UserFactory(username="ops", is_platform_admin=True))
    response = client.post(
        "/tenants/new/",
        {
            "slug": "ledger",
            "name": "Ledger",
            "repo_url": "https://127.0.0.1:9/ledger.git",
            "branch": "main",
            "engine": "argocd",
            "cpu": "8",
            "memory": "16Gi",
            "storage": "100Gi",
            "namespaces": "10",
        },
        follow=True,
    )
    assert response.redirect_chain[-1][0] == "/tenants/ledger/"
    (call,) = queued
    assert "Repository check:" in response.content.decode()
    assert "pending…" in response.content.decode()
    assert tasks.check_repository(*call) is True
    tenant = Tenant.objects.get(slug="ledger")
    assert tenant.repository_check_ok is False  # nothing listens on port 9
    assert "ledger.git" in tenant.repository_check_message


def test_the_schema_describes_the_repository_check(db):
    schema = APIClient().get("/api/schema/", {"format": "json"}).json()
    check = schema["components"]["schemas"]["RepositoryCheck"]
    assert set(check["properties"]) == {"status", "message", "checked_at"}
