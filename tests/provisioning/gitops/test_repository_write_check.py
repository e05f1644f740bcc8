"""Onboarding proves Berth may write the tenant's repository: the worker's check pushes an
empty commit to a throwaway ref and deletes it again, so a credential that can only read
fails it, saying so, and the tenant's new requests are refused until it passes."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from tenants import tasks
from tenants.models import Request, Tenant
from tests.support.factories import ClusterFactory, TenantFactory, TierFactory, UserFactory
from tests.support.gitserver import git, payments_repo_server
from tests.support.tenants_api import REQUESTS, namespace_request

WRITER = "write-token-0123456789abcdef"
READER = "read-token-0123456789abcdef"


@pytest.fixture
def forge(tmp_path):
    """A repository served over HTTP that takes one token for pushes and another for reads
    only, as a forge's deploy tokens."""
    with payments_repo_server(tmp_path, token=WRITER, read_only_token=READER) as running:
        yield running


def checked_with(admin_api, forge, queued, token: str) -> dict:
    """Set the tenant's repository and credential over the API, run the check as the worker
    does, and return what the API then says of it."""
    response = admin_api.patch(
        "/api/v1/tenants/payments/",
        {"gitops_repo_url": forge.url("payments.git"), "gitops_credentials": f"bot:{token}"},
        format="json",
    )
    assert response.status_code == 200, response.content
    assert tasks.check_repository(*queued[-1]) is True
    return admin_api.get("/api/v1/tenants/payments/").json()["repository_check"]


def refs_of(forge) -> str:
    return git("--git-dir", str(forge.root / "payments.git"), "for-each-ref")


def test_a_credential_that_may_push_passes_and_leaves_no_ref_behind(admin_api, forge, queued):
    TenantFactory(slug="payments")
    before = refs_of(forge)

    shown = checked_with(admin_api, forge, queued, WRITER)

    assert shown["status"] == "ok", shown
    assert "takes Berth's pushes" in shown["message"]
    assert refs_of(forge) == before  # the throwaway ref is gone again
    pushes = [seen for seen in forge.seen if "git-receive-pack" in seen["path"]]
    assert len(pushes) == 2  # the empty commit, then its deletion


def test_a_read_only_credential_fails_the_check_saying_berth_cannot_push(admin_api, forge, queued):
    TenantFactory(slug="payments")

    shown = checked_with(admin_api, forge, queued, READER)

    assert shown["status"] == "failed", shown
    assert "can read" in shown["message"] and "cannot push" in shown["message"]
    assert READER not in shown["message"]


def test_a_tenant_whose_repository_failed_its_check_gets_no_new_request(admin_api, forge, queued):
    tenant = TenantFactory(
        slug="payments", budget_cpu_millis=8000, budget_memory_mib=16384, budget_namespaces=10
    )
    tenant.allowed_clusters.add(ClusterFactory(name="sandbox"))
    tenant.allowed_tiers.add(TierFactory(slug="dev"))
    checked_with(admin_api, forge, queued, READER)
    requester = UserFactory(username="olivia")
    tenant.memberships.create(user=requester, role="owner")
    api = APIClient()
    api.force_authenticate(requester)

    refused = api.post(REQUESTS, namespace_request(), format="json")

    assert refused.status_code == 400, refused.content
    assert "failed its check" in refused.content.decode()
    assert "cannot push" in refused.content.decode()
    assert not Request.objects.filter(tenant=tenant).exclude(kind="tenant_sync").exists()

    checked_with(admin_api, forge, queued, WRITER)  # fixed: taken again
    taken = api.post(REQUESTS, namespace_request(), format="json")
    assert taken.status_code == 201, taken.content


def test_a_check_that_could_not_be_queued_is_not_taken_for_a_failed_one(admin_api, db, monkeypatch):
    def broker_down(*args: object) -> None:
        raise ConnectionError("broker down")

    monkeypatch.setattr(tasks.check_repository, "delay", broker_down)
    TenantFactory(slug="payments")
    admin_api.patch(
        "/api/v1/tenants/payments/",
        {"gitops_repo_url": "https://git.example.com/payments.git"},
        format="json",
    )

    shown = admin_api.get("/api/v1/tenants/payments/").json()["repository_check"]
    assert shown["status"] == "not_checked"
    assert "task queue is unavailable" in shown["message"]
    assert Tenant.objects.get(slug="payments").repository_check_ok is None
