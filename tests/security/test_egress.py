"""Outbound connections Berth makes for its users go only where they should.

A webhook URL or a repository URL is typed by a person; Berth must not POST signed events
or run git against its own network for them (loopback, cloud metadata at 169.254.169.254,
private ranges, Berth itself) unless the operator allows that network (BERTH_EGRESS_ALLOW).
The suite's settings allow loopback (its servers live there); these tests take it away.
The repository check runs in a worker, never in the request, and git's commands there have
the short timeout of an answer someone waits for.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import socket
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from rest_framework.test import APIClient

from tenants import provisioner, tasks
from tenants.egress import EgressRefused, check_host
from tenants.models import Tenant
from tests.support.factories import TenantFactory, UserFactory
from tests.support.gitserver import payments_repo_server

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "egress-test-token-0123456789"
EVENT = {"event": "request.ready", "request": {"id": 7, "tenant": "payments"}}


class Recorder(BaseHTTPRequestHandler):
    """Records every request; answers `status`, with `location` when it is a redirect."""

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.received.append((dict(self.headers), body))
        self.send_response(self.server.status)
        if self.server.location:
            self.send_header("Location", self.server.location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST

    def log_message(self, *args) -> None:
        pass


class Receiver:
    def __init__(self, status: int = 204, location: str = "") -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
        self.server.received, self.server.status = [], status
        self.server.location = location
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def received(self) -> list:
        return self.server.received

    def url(self, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}/hooks/berth"

    def __enter__(self) -> Receiver:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver():
    with Receiver() as running:
        yield running


@pytest.fixture
def no_loopback(settings):
    """Production's default: no network allowed beyond the public internet."""
    settings.BERTH_EGRESS_ALLOW = []


@pytest.fixture
def admin_api(db):
    api = APIClient()
    api.force_authenticate(UserFactory(username="pat", is_platform_admin=True))
    return api


def with_webhook(url: str, secret: str = "hook-secret") -> Tenant:
    """A tenant whose webhook was saved before its address became refused (DNS changes;
    an operator narrows BERTH_EGRESS_ALLOW): only the check at delivery stands between."""
    tenant = TenantFactory(slug="payments")
    Tenant.objects.filter(pk=tenant.pk).update(webhook_url=url)
    tenant.refresh_from_db()
    tenant.webhook_secret = secret
    tenant.save()
    return tenant


def resolving(monkeypatch, names: dict[str, str]) -> None:
    """Make these names resolve (for Berth's egress check) to these addresses."""
    real = socket.getaddrinfo

    def fake(host, port, *args, **kwargs):
        if host in names:
            return real(names[host], port, *args, **kwargs)
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr("tenants.egress.socket.getaddrinfo", fake)


# --- webhooks: refused when they are typed ---------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:6379/",
        "https://127.0.0.1/hooks",
        "http://169.254.169.254/latest/meta-data/iam/",
        "https://10.20.30.40/hooks",
        "https://192.168.1.1/hooks",
        "https://[::1]/hooks",
        "https://[::ffff:127.0.0.1]/hooks",
        "https://[fe80::1]/hooks",
        "https://0.0.0.0/hooks",
        "https://localhost/hooks",
    ],
)
def test_a_webhook_into_berths_own_network_is_refused_naming_webhook_url(
    admin_api, no_loopback, url
):
    tenant = TenantFactory(slug="payments")
    response = admin_api.patch("/api/v1/tenants/payments/", {"webhook_url": url}, format="json")
    assert response.status_code == 400, response.content
    assert "BERTH_EGRESS_ALLOW" in str(response.json()["errors"]["webhook_url"])
    tenant.refresh_from_db()
    assert tenant.webhook_url == ""


def test_a_webhook_to_a_name_resolving_inside_is_refused_with_the_address_it_resolves_to(
    admin_api, no_loopback, monkeypatch
):
    resolving(monkeypatch, {"hooks.example.test": "10.0.0.5"})
    TenantFactory(slug="payments")
    response = admin_api.patch(
        "/api/v1/tenants/payments/",
        {"webhook_url": "https://hooks.example.test/berth"},
        format="json",
    )
    assert response.status_code == 400
    (message,) = response.json()["errors"]["webhook_url"]
    assert "hooks.example.test resolves to 10.0.0.5, a private address" in message


def test_a_webhook_with_credentials_in_its_url_is_refused(admin_api, monkeypatch):
    resolving(monkeypatch, {"hooks.example.test": "127.0.0.1"})
    TenantFactory(slug="payments")
    response = admin_api.patch(
        "/api/v1/tenants/payments/",
        {"webhook_url": "https://user:pw@hooks.example.test/"},
        format="json",
    )
    assert response.status_code == 400
    assert "webhook secret" in str(response.json()["errors"]["webhook_url"])


def test_plain_http_webhooks_go_only_to_networks_the_operator_allows(
    admin_api, monkeypatch, settings
):
    resolving(monkeypatch, {"hooks.example.test": "127.0.0.1"})
    tenant = TenantFactory(slug="payments")
    allowed = admin_api.patch(
        "/api/v1/tenants/payments/",
        {"webhook_url": "http://hooks.example.test:8080/berth"},
        format="json",
    )
    assert allowed.status_code == 200, allowed.content
    tenant.refresh_from_db()
    assert tenant.webhook_url == "http://hooks.example.test:8080/berth"

    settings.BERTH_EGRESS_ALLOW = []
    refused = admin_api.patch(
        "/api/v1/tenants/payments/", {"webhook_url": "http://8.8.8.8/berth"}, format="json"
    )
    assert refused.status_code == 400
    assert "https://" in str(refused.json()["errors"]["webhook_url"])


def test_the_admin_refuses_a_webhook_into_berths_network_too(db, no_loopback):
    from django.forms import modelform_factory

    from tenants.admin import TenantForm

    tenant = TenantFactory(slug="payments")
    form = modelform_factory(Tenant, form=TenantForm, fields=["webhook_url"])(
        instance=tenant, data={"webhook_url": "http://169.254.169.254/"}
    )
    assert not form.is_valid()
    assert "BERTH_EGRESS_ALLOW" in str(form.errors["webhook_url"])


# --- webhooks: refused again when they are delivered ------------------------------------------


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_delivery_to_a_refused_address_sends_nothing_and_is_not_retried(
    db, receiver, no_loopback, host, caplog
):
    tenant = with_webhook(receiver.url(host))
    assert tasks.deliver_webhook.apply(args=(tenant.pk, EVENT)).get() == 0
    assert receiver.received == []
    assert "not sent" in caplog.text and "BERTH_EGRESS_ALLOW" in caplog.text
    assert "hook-secret" not in caplog.text


def test_delivery_to_an_allowed_network_posts_the_signed_event(db, receiver):
    tenant = with_webhook(receiver.url())
    assert tasks.deliver_webhook.apply(args=(tenant.pk, EVENT)).get() == 204
    ((headers, body),) = receiver.received
    assert json.loads(body) == EVENT
    assert headers["X-Berth-Signature"] == (
        "sha256=" + hmac.new(b"hook-secret", body, hashlib.sha256).hexdigest()
    )


def test_delivery_connects_to_the_address_it_checked_keeping_the_name_as_host(
    db, receiver, monkeypatch
):
    # The name resolves only for the check: reaching the receiver at all means the
    # connection went to the checked address, not to a second lookup of the name.
    resolving(monkeypatch, {"hooks.example.test": "127.0.0.1"})
    tenant = with_webhook(receiver.url("hooks.example.test"))
    assert tasks.deliver_webhook.apply(args=(tenant.pk, EVENT)).get() == 204
    ((headers, _),) = receiver.received
    assert headers["Host"] == f"hooks.example.test:{receiver.port}"


def test_a_redirect_is_not_followed_nor_retried(db, receiver, caplog):
    with Receiver(status=302, location=receiver.url("localhost")) as redirecting:
        tenant = with_webhook(redirecting.url())
        assert tasks.deliver_webhook.apply(args=(tenant.pk, EVENT)).get() == 302
        assert len(redirecting.received) == 1
    assert receiver.received == []
    assert "redirect" in caplog.text and "not followed" in caplog.text


# --- repositories ----------------------------------------------------------------------------


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


@pytest.fixture
def queued(monkeypatch):
    """The repository checks queued, instead of a broker: (tenant id, queued at) each."""
    calls = []
    monkeypatch.setattr(tasks.check_repository, "delay", lambda *args: calls.append(args))
    return calls


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


# --- the setting -------------------------------------------------------------------------------


def test_an_invalid_network_in_the_allow_list_stops_berth_at_start(tmp_path):
    result = subprocess.run(
        [sys.executable, "-c", "import portal.settings"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={
            **os.environ,
            "BERTH_EGRESS_ALLOW": "127.0.0.0/8,10.0.0.0/33",
            "BERTH_DATA_DIR": str(tmp_path),
            "SECRET_KEY": "x" * 50,
            "BERTH_FERNET_KEYS": "q8Qh7Jqg0r4mX2eQnYV1m1cVt9C9bq0z6xk3h8W5e3k=",
        },
        timeout=120,
    )
    assert result.returncode != 0
    assert "BERTH_EGRESS_ALLOW: '10.0.0.0/33' is not a network" in result.stderr


def test_allowing_a_network_lets_exactly_that_network_through(settings):
    settings.BERTH_EGRESS_ALLOW = ["10.20.0.0/16"]
    assert [str(a) for a in check_host("10.20.3.4", 443)] == ["10.20.3.4"]
    with pytest.raises(EgressRefused, match="10.21.0.1 is a private address"):
        check_host("10.21.0.1", 443)
    with pytest.raises(EgressRefused, match="loopback"):
        check_host("127.0.0.1", 443)


def test_berths_own_names_and_addresses_are_refused(settings, monkeypatch):
    resolving(monkeypatch, {"berth.example.org": "8.8.8.8"})
    settings.ALLOWED_HOSTS = ["berth.example.org", "8.8.4.4"]
    with pytest.raises(EgressRefused, match="berth.example.org is one of this Berth's own"):
        check_host("berth.example.org", 443)
    with pytest.raises(EgressRefused, match="8.8.4.4 is this Berth's own address"):
        check_host("8.8.4.4", 443)
