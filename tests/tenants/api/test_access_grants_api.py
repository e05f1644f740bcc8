"""Access grants over the API (/api/v1/access-grants/): anyone in a tenant asks for one of a
tier's roles on a live namespace, of their tenant or another; the namespace's tenant decides
it by its rules (nobody approves their own); the grant is seen by its person, by the
namespace's tenant and by platform admins, and by nobody else; its person, an owner of the
tenant or a platform admin ends it early. (What the cluster binds: the engine's tests,
tests/provisioning/jobs/test_access_grants.py.)"""

from __future__ import annotations

import pytest

from tenants import services
from tenants.choices import Role
from tenants.models import AccessGrant, Membership
from tenants.selectors import review
from tests.support.api import api, assert_problem
from tests.support.factories import UserFactory
from tests.tenants.api.test_deploy_tokens import live_namespace

pytestmark = pytest.mark.django_db

GRANTS = "/api/v1/access-grants/"


def ask(user, namespace: str, role: str = "viewer", scopes=None, **more):
    body = {"namespace": namespace, "role": role, "duration": "1h", "reason": "debug it", **more}
    client = api(user) if scopes is None else api(user, scopes=scopes)
    return client.post(GRANTS, {k: v for k, v in body.items() if v is not None}, format="json")


def approved(grant_id: int, approver) -> AccessGrant:
    grant = AccessGrant.objects.get(pk=grant_id)
    services.approve_request(
        request_id=grant.request_id, approver=approver, plan_digest=review(grant.request).digest
    )
    grant.refresh_from_db()
    return grant


@pytest.fixture
def dev(api_world):
    return live_namespace(api_world, "dev", "payments-shop-dev")


@pytest.fixture
def staging(api_world):
    return live_namespace(api_world, "staging", "payments-shop-staging")


@pytest.fixture
def searcher(api_world):
    """Another member of search, beside sam: sam's grants of payments are not theirs to see."""
    user = UserFactory(username="sid")
    Membership.objects.create(user=user, tenant=api_world.search, role=Role.MEMBER)
    return user


@pytest.fixture
def sams(api_world, dev) -> dict:
    """sam (of search) asks for member on payments' dev namespace."""
    response = ask(api_world.outsider, dev.name, "member")
    assert response.status_code == 201, response.content
    return response.json()


def test_a_member_asks_for_viewer_on_their_tenants_namespace(api_world, dev):
    response = ask(api_world.member, dev.name, "viewer")

    assert response.status_code == 201, response.content
    body = response.json()
    assert response["Location"] == f"{GRANTS}{body['id']}/"
    # The demo's rules approve dev-tier requests of the tenant's own by themselves.
    assert body["state"] == "granting"
    assert {
        "namespace": dev.name,
        "cluster": "sandbox",
        "tenant": "payments",
        "person": "dev",
        "role": "viewer",
        "cluster_role": dev.tier.viewer_cluster_role,
        "subject": "oidc:devidp-dev",
        "duration": "1h",
        "reason": "debug it",
        "revoked_at": None,
        "revoked_by": None,
        "ended_at": None,
    }.items() <= body.items()
    grant = AccessGrant.objects.get(pk=body["id"])
    assert body["request"] == grant.request_id
    assert body["request_url"] == f"/api/v1/requests/{grant.request_id}/"
    assert body["starts_at"] and body["expires_at"]
    assert body["permissions"] == {"may_revoke": True}


def test_an_outsider_asks_and_the_owning_tenant_decides(api_world, sams):
    assert sams["state"] == "pending"
    assert sams["tenant"] == "payments" and sams["person"] == "sam"
    assert sams["starts_at"] is None and sams["expires_at"] is None
    # Pending: nothing to revoke yet (its request is cancelled or rejected instead).
    assert sams["permissions"] == {"may_revoke": False}


def test_the_grant_is_seen_by_its_person_its_tenant_and_platform_admins_only(
    api_world, sams, searcher
):
    url = f"{GRANTS}{sams['id']}/"
    for who in (api_world.outsider, api_world.owner, api_world.member, api_world.admin):
        response = api(who).get(url)
        assert response.status_code == 200, (who.username, response.content)
        assert response.json()["id"] == sams["id"]
        listed = api(who).get(GRANTS).json()["results"]
        assert sams["id"] in [row["id"] for row in listed], who.username
    assert_problem(api(searcher).get(url), 404, "not-found")
    assert api(searcher).get(GRANTS).json()["results"] == []
    assert_problem(api(searcher).post(f"{url}revoke/"), 404)


def test_the_list_is_newest_first_and_filters_by_state_namespace_and_mine(
    api_world, dev, staging, sams
):
    own = ask(api_world.member, staging.name, "member").json()
    owner = api(api_world.owner)

    listed = owner.get(GRANTS).json()
    assert [row["id"] for row in listed["results"]] == [own["id"], sams["id"]]
    assert listed["count"] == 2 and listed["next"] is None
    by_namespace = owner.get(GRANTS, {"namespace": dev.name}).json()["results"]
    assert [row["id"] for row in by_namespace] == [sams["id"]]
    assert owner.get(GRANTS, {"mine": "true"}).json()["results"] == []
    mine = api(api_world.member).get(GRANTS, {"mine": "true"}).json()["results"]
    assert [row["id"] for row in mine] == [own["id"]]
    pending = owner.get(GRANTS, {"state": "pending"}).json()["results"]
    assert {row["id"] for row in pending} == {own["id"], sams["id"]}
    assert owner.get(GRANTS, {"state": "active"}).json()["results"] == []

    body = assert_problem(owner.get(GRANTS, {"state": "forever"}), 400, "validation-error")
    assert "state" in body["errors"]


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        ({"role": "root"}, "role", "offers owner, member, viewer"),
        ({"duration": "5m"}, "duration", "lasts from 15m"),
        ({"duration": "3d"}, "duration", "lasts from 15m"),
        ({"duration": "soon"}, "duration", "not a duration"),
        ({"reason": None}, "reason", "required"),
        ({"reason": "x"}, "reason", "Say why"),
        ({"namespace": "payments-nowhere-dev"}, "namespace", "not a live namespace"),
    ],
)
def test_what_is_wrong_is_said_by_field(api_world, dev, change, field, words):
    body = {"namespace": dev.name, "role": "member", "duration": "1h", "reason": "debug it"}
    body.update(change)
    response = ask(api_world.outsider, **body)

    problem = assert_problem(response, 400, "validation-error")
    assert field in problem["errors"], problem
    assert words in " ".join(problem["errors"][field]), problem
    assert not AccessGrant.objects.exists()


def test_asking_twice_for_the_same_is_refused_until_the_first_is_over(api_world, sams, dev):
    again = assert_problem(ask(api_world.outsider, dev.name, "member"), 400)
    assert f"request #{sams['request']}" in again["errors"]["role"][0]


def test_a_read_only_token_may_not_ask(api_world, dev):
    body = assert_problem(ask(api_world.member, dev.name, scopes=("read",)), 403, "forbidden")
    assert "'request' scope" in body["detail"]
    assert not AccessGrant.objects.exists()


def test_a_retried_post_with_its_idempotency_key_asks_once(api_world, dev):
    client = api(api_world.outsider)
    body = {"namespace": dev.name, "role": "member", "duration": "1h", "reason": "debug it"}
    first = client.post(GRANTS, body, format="json", HTTP_IDEMPOTENCY_KEY="ask-once")
    second = client.post(GRANTS, body, format="json", HTTP_IDEMPOTENCY_KEY="ask-once")

    assert first.status_code == second.status_code == 201
    assert second["Idempotent-Replayed"] == "true"
    assert second.json()["id"] == first.json()["id"]
    assert AccessGrant.objects.count() == 1


def test_nobody_approves_their_own_request_for_access(api_world, sams, staging):
    own = api(api_world.outsider).post(
        f"/api/v1/requests/{sams['request']}/approve/",
        {"plan_digest": review(AccessGrant.objects.get(pk=sams["id"]).request).digest},
        format="json",
    )
    assert assert_problem(own, 403, "forbidden")["detail"] == "Nobody may decide their own request."
    assert AccessGrant.objects.get(pk=sams["id"]).state == "pending"
    # Not even an owner of the tenant asking for more on its own namespace.
    mine = ask(api_world.owner, staging.name, "owner").json()
    assert mine["state"] == "pending"
    grant = AccessGrant.objects.get(pk=mine["id"])
    own = api(api_world.owner).post(
        f"/api/v1/requests/{grant.request_id}/approve/",
        {"plan_digest": review(grant.request).digest},
        format="json",
    )
    assert_problem(own, 403, "forbidden")


def test_revoking_is_for_its_person_an_owner_or_a_platform_admin(api_world, sams):
    url = f"{GRANTS}{sams['id']}/revoke/"
    pending = assert_problem(api(api_world.outsider).post(url), 409, "conflict")
    assert "cancel or reject its request instead" in pending["detail"]

    grant = approved(sams["id"], api_world.admin)
    assert grant.state == "granting" and grant.expires_at is not None
    seen = api(api_world.outsider).get(f"{GRANTS}{grant.pk}/").json()
    assert seen["permissions"] == {"may_revoke": True}
    assert api(api_world.member).get(f"{GRANTS}{grant.pk}/").json()["permissions"] == {
        "may_revoke": False
    }

    # A member of payments sees it and may not end it: the answer says who may.
    refused = assert_problem(api(api_world.member).post(url), 403, "forbidden")
    assert "Only the person holding it, an owner of its tenant" in refused["detail"]

    done = api(api_world.outsider).post(url)
    assert done.status_code == 200, done.content
    body = done.json()
    assert body["state"] == "revoked" and body["revoked_by"] == "sam" and body["revoked_at"]
    assert body["permissions"] == {"may_revoke": False}

    again = assert_problem(api(api_world.admin).post(url), 409, "conflict")
    assert "This grant is revoked" in again["detail"]


def test_a_platform_admin_ends_anyones_grant(api_world, sams):
    approved(sams["id"], api_world.owner)
    done = api(api_world.admin).post(f"{GRANTS}{sams['id']}/revoke/")

    assert done.status_code == 200, done.content
    assert done.json()["revoked_by"] == "pat"
    assert api(api_world.owner).get(GRANTS, {"state": "revoked"}).json()["count"] == 1


def test_a_grants_holder_gets_its_namespaces_kubeconfig_and_the_download_is_audited(
    api_world, dev, sams, settings
):
    """sam belongs to search: only his live grant lets him have payments' namespace's
    kubeconfig (and nothing else of it), each one in the audit log."""
    from tenants.models import AuditEvent

    settings.KUBE_OIDC_ISSUER_URL, settings.KUBE_OIDC_CLIENT_ID = "https://idp.example", "k8s"
    kubeconfig = f"/api/v1/namespaces/{dev.name}/kubeconfig/"
    assert api(api_world.outsider).get(kubeconfig).status_code == 404
    grant = approved(sams["id"], api_world.owner)
    run = services.start_provisioning(request_id=grant.request_id, plan_digest="applied")
    services.mark_ready(run=run)  # as the worker does once the binding is on the cluster

    answer = api(api_world.outsider).get(kubeconfig)
    assert answer.status_code == 200, answer.content
    assert answer.json()["cluster_role"] == grant.cluster_role
    event = AuditEvent.objects.get(action="access.kubeconfig_downloaded")
    assert event.actor == api_world.outsider and event.after["grant"] == grant.pk
    # The grant opens its kubeconfig, not the namespace's other pages.
    assert (
        api(api_world.outsider).get(f"/api/v1/namespaces/{dev.name}/deploy-tokens/").status_code
        == 404
    )
