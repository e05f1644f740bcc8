"""The access grants' pages: asking on the form (errors on their fields, nothing lost or
saved; success goes to the grant), the list and the grant for the person, the owning
tenant and platform admins (404 for anyone else), revoking, the namespace page's and the
access map's grants, and an outsider's kubeconfig while their grant is live."""

from datetime import timedelta

import pytest
from django.utils import timezone

from tenants import services
from tenants.choices import NamespaceState, RequestState, Role
from tenants.models import AccessGrant, AuditEvent, Membership, Namespace, Request, Tenant
from tests.support.factories import UserFactory
from tests.support.workflow import approve_if_needed, ask_for_namespace

ISSUER = "https://idp.example.com"


@pytest.fixture
def live(demo_world) -> Namespace:
    """payments-shop-dev, live (as a worker leaves it: no cluster here)."""
    made = approve_if_needed(
        ask_for_namespace(demo_world["tenant"], demo_world["developer"], app="shop"),
        approver=demo_world["admin"],
    )
    Namespace.objects.filter(request=made).update(state=NamespaceState.ACTIVE)
    Request.objects.filter(pk=made.pk).update(state=RequestState.READY)
    return Namespace.objects.get(request=made)


@pytest.fixture
def prod(demo_world) -> Namespace:
    made = approve_if_needed(
        ask_for_namespace(demo_world["tenant"], demo_world["developer"], app="shop", tier="prod"),
        approver=demo_world["admin"],
    )
    Namespace.objects.filter(request=made).update(state=NamespaceState.ACTIVE)
    return Namespace.objects.get(request=made)


def asked(world, namespace, *, person=None, role="member", duration="1h") -> AccessGrant:
    return services.request_access(
        person=person or world["outsider"],
        namespace=namespace.name,
        role=role,
        duration=duration,
        reason="debug the search integration",
    )


def active(world, namespace, **more) -> AccessGrant:
    """Asked, approved by a platform admin (unless the rules did) and bound (as the engine
    leaves it)."""
    grant = asked(world, namespace, **more)
    approve_if_needed(grant.request, approver=world["admin"])
    Request.objects.filter(pk=grant.request_id).update(state=RequestState.READY)
    return AccessGrant.objects.get(pk=grant.pk)


def other_tenants_member():
    """A developer of search who is not the grant's holder."""
    person = UserFactory(username="stella")
    Membership.objects.create(user=person, tenant=Tenant.objects.get(slug="search"), role="member")
    return person


# --- the form --------------------------------------------------------------------------------


def test_the_form_offers_the_tiers_roles_and_durations_within_its_bounds(
    client, demo_world, live, prod
):
    client.force_login(demo_world["outsider"])
    page = client.get(f"/access/grants/new/?namespace={live.name}").content.decode()
    assert f"Ask for access to <code>{live.name}</code>" in page
    assert f'type="hidden" name="namespace" value="{live.name}"' in page
    assert "member (berth-tenant-edit)" in page and "viewer (berth-tenant-view)" in page
    for value in ("15m", "30m", "1h", "2h", "4h", "8h"):
        assert f'<option value="{value}"' in page
    assert '<option value="1h" selected>' in page

    page = client.get(f"/access/grants/new/?namespace={prod.name}").content.decode()
    assert "prod-edit (berth-tenant-edit)" in page
    assert '<option value="4h"' in page and '<option value="8h"' not in page  # 240 at most

    page = client.get("/access/grants/new/").content.decode()
    assert 'type="text" name="namespace"' in page


def test_bad_input_is_shown_on_its_fields_and_nothing_is_saved(client, demo_world, live):
    client.force_login(demo_world["outsider"])
    requests_before = Request.objects.count()
    response = client.post(
        f"/access/grants/new/?namespace={live.name}",
        {"namespace": live.name, "role": "member", "duration": "2h", "reason": "x"},
    )
    page = response.content.decode()
    assert response.status_code == 200
    assert "Say why you need it" in page
    assert '<option value="2h" selected>' in page  # nothing lost
    assert ">\nx</textarea>" in page
    assert AccessGrant.objects.count() == 0 and Request.objects.count() == requests_before

    response = client.post(
        "/access/grants/new/",
        {"namespace": "payments-nope-dev", "role": "viewer", "duration": "1h", "reason": "why"},
    )
    page = response.content.decode()
    assert "is not a live namespace" in page
    assert 'value="payments-nope-dev"' in page
    assert AccessGrant.objects.count() == 0


def test_asking_goes_to_the_grant_waiting_for_its_tenant(client, demo_world, live):
    client.force_login(demo_world["outsider"])
    response = client.post(
        "/access/grants/new/",
        {"namespace": live.name, "role": "viewer", "duration": "30m", "reason": "read logs"},
    )
    grant = AccessGrant.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/access/grants/{grant.pk}/"
    assert (grant.person, grant.role, grant.duration) == (
        demo_world["outsider"],
        "viewer",
        timedelta(minutes=30),
    )
    page = client.get(response["Location"]).content.decode()
    assert 'data-grant-state="pending"' in page
    assert f'href="/requests/{grant.request_id}/"' in page
    assert 'id="revoke-grant"' not in page  # pending: its request is cancelled, not revoked


# --- who sees what ---------------------------------------------------------------------------


def test_the_person_the_owning_tenant_and_admins_see_it_and_nobody_else(client, demo_world, live):
    grant = active(demo_world, live)
    for person in ("outsider", "owner", "developer", "admin"):
        client.force_login(demo_world[person])
        listed = client.get("/access/grants/").content.decode()
        assert f'data-grant="{grant.pk}"' in listed, person
        assert "debug the search integration" in listed
        assert client.get(f"/access/grants/{grant.pk}/").status_code == 200, person
    client.force_login(other_tenants_member())
    assert f'data-grant="{grant.pk}"' not in client.get("/access/grants/").content.decode()
    assert client.get(f"/access/grants/{grant.pk}/").status_code == 404
    assert client.post(f"/access/grants/{grant.pk}/revoke/").status_code == 404


def test_the_list_filters_by_state(client, demo_world, live):
    grant = active(demo_world, live)
    waiting = asked(demo_world, live, role="viewer")
    client.force_login(demo_world["owner"])
    page = client.get("/access/grants/?state=pending").content.decode()
    assert f'data-grant="{waiting.pk}"' in page and f'data-grant="{grant.pk}"' not in page
    page = client.get("/access/grants/?state=active").content.decode()
    assert f'data-grant="{grant.pk}"' in page and f'data-grant="{waiting.pk}"' not in page
    page = client.get("/access/grants/?state=bogus").content.decode()
    assert f'data-grant="{grant.pk}"' in page and f'data-grant="{waiting.pk}"' in page


# --- revoking --------------------------------------------------------------------------------


def test_the_holder_an_owner_and_an_admin_may_revoke_and_a_member_may_not(client, demo_world, live):
    grant = active(demo_world, live)
    for person in ("outsider", "owner", "admin"):
        client.force_login(demo_world[person])
        assert 'id="revoke-grant"' in client.get(f"/access/grants/{grant.pk}/").content.decode()
    client.force_login(demo_world["developer"])  # a member of payments, not an owner
    assert 'id="revoke-grant"' not in client.get(f"/access/grants/{grant.pk}/").content.decode()
    assert client.post(f"/access/grants/{grant.pk}/revoke/").status_code == 403
    assert AccessGrant.objects.get(pk=grant.pk).revoked_at is None

    client.force_login(demo_world["owner"])
    response = client.post(f"/access/grants/{grant.pk}/revoke/", follow=True)
    page = response.content.decode()
    assert 'data-grant-state="revoked"' in page and 'id="revoke-grant"' not in page
    assert "by Olivia" in page
    assert AuditEvent.objects.filter(action="access.revoked").count() == 1
    again = client.post(f"/access/grants/{grant.pk}/revoke/", follow=True).content.decode()
    assert "This grant is revoked" in again


# --- the namespace page and the access map ---------------------------------------------------


def test_the_namespace_page_lists_live_grants_and_asks_for_more(client, demo_world, live):
    client.force_login(demo_world["developer"])
    page = client.get(f"/namespaces/{live.pk}/").content.decode()
    assert "Nobody holds a role here by a grant now." in page
    assert f'href="/access/grants/new/?namespace={live.name}"' in page
    grant = active(demo_world, live)
    over = active(demo_world, live, role="viewer")
    AccessGrant.objects.filter(pk=over.pk).update(expires_at=timezone.now() - timedelta(minutes=1))
    page = client.get(f"/namespaces/{live.pk}/").content.decode()
    assert f'data-grant="{grant.pk}"' in page and "debug the search integration" in page
    assert f'data-grant="{over.pk}"' not in page


def test_the_access_map_says_who_holds_a_role_by_a_grant_in_fixed_queries(
    client, demo_world, live, django_assert_max_num_queries
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    grant = active(demo_world, live)
    client.force_login(demo_world["owner"])
    with CaptureQueriesContext(connection) as before:
        page = client.get(f"/access/namespaces/{live.name}/").content.decode()
    assert f'data-grant="{grant.pk}"' in page
    assert "oidc:devidp-sam" in page and "debug the search integration" in page
    assert f'href="/requests/{grant.request_id}/"' in page
    more = [active(demo_world, live, person=demo_world["developer"], role="viewer")]
    more.append(active(demo_world, live, role="viewer"))
    with django_assert_max_num_queries(len(before)):
        page = client.get(f"/access/namespaces/{live.name}/").content.decode()
    assert all(f'data-grant="{g.pk}"' in page for g in more)


def test_the_access_page_links_the_grants(client, demo_world):
    client.force_login(demo_world["developer"])
    assert 'href="/access/grants/"' in client.get("/access/").content.decode()


# --- the holder's kubeconfig -----------------------------------------------------------------


def test_an_outsider_holding_a_live_grant_gets_its_kubeconfig(client, demo_world, live, settings):
    settings.KUBE_OIDC_ISSUER_URL, settings.KUBE_OIDC_CLIENT_ID = ISSUER, "kubernetes"
    grant = active(demo_world, live)
    client.force_login(demo_world["outsider"])
    assert client.get(f"/namespaces/{live.pk}/").status_code == 404  # not sam's tenant
    page = client.get(f"/access/grants/{grant.pk}/").content.decode()
    assert 'id="use-it"' in page
    assert f"access grant #{grant.pk}</a>: member (<code>berth-tenant-edit</code>) until" in page
    assert "bound by your access grant to your user name (oidc:devidp-sam) alone" in page
    download = f"/access/grants/{grant.pk}/kubeconfig.yaml"
    assert f'href="{download}?credentials=kubelogin"' in page

    response = client.get(download, {"credentials": "berth"})
    assert response.status_code == 200
    assert f"namespace: {live.name}" in response.content.decode()
    event = AuditEvent.objects.get(action="access.kubeconfig_downloaded")
    assert event.actor == demo_world["outsider"] and event.after["grant"] == grant.pk
    assert event.after["credentials"] == "berth"

    client.force_login(demo_world["owner"])  # sees the grant, does not hold it
    assert 'id="use-it"' not in client.get(f"/access/grants/{grant.pk}/").content.decode()
    assert client.get(download).status_code == 404

    AccessGrant.objects.filter(pk=grant.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    client.force_login(demo_world["outsider"])
    page = client.get(f"/access/grants/{grant.pk}/").content.decode()
    assert 'data-grant-state="expired"' in page and 'id="use-it"' not in page
    assert client.get(download).status_code == 404
    assert AuditEvent.objects.filter(action="access.kubeconfig_downloaded").count() == 1


def test_a_member_holding_a_grant_sees_it_in_the_namespace_pages_use_it(
    client, demo_world, live, settings
):
    settings.KUBE_OIDC_ISSUER_URL, settings.KUBE_OIDC_CLIENT_ID = ISSUER, "kubernetes"
    viewer = UserFactory(username="vic", oidc_subject="devidp-vic")
    Membership.objects.create(user=viewer, tenant=demo_world["tenant"], role=Role.VIEWER)
    grant = active(demo_world, live, person=viewer)
    client.force_login(viewer)
    page = client.get(f"/namespaces/{live.pk}/").content.decode()
    # Its download is the grant's, which the audit log records.
    assert f'href="/access/grants/{grant.pk}/kubeconfig.yaml?credentials=kubelogin"' in page
    assert "member (<code>berth-tenant-edit</code>) until" in page
