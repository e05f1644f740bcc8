"""Ephemeral environments in the browser's pages: the tenant's list, an environment's page
(extend, end), and the namespace page's list of the environments living in it."""

from datetime import timedelta

import pytest
from django.utils import timezone

from tenants import services
from tenants.choices import EnvironmentState, RequestKind, Role
from tenants.models import AuditEvent, EphemeralEnvironment, Request, Tenant
from tests.support.factories import MembershipFactory, UserFactory
from tests.support.workflow import ask_for_environment

# The environments here are of payments' checkout project.
pytestmark = pytest.mark.usefixtures("checkout")


def start(demo_world, *, env_slug="review-42", requester=None, live=True, **payload):
    """An environment of payments' checkout project, made as CI would, then marked live
    (provisioning is the engine's business)."""
    created = ask_for_environment(
        demo_world["tenant"],
        requester or demo_world["developer"],
        project="checkout",
        env_slug=env_slug,
        **({"branch": "feature/new-cart", "mr_id": "42"} | payload),
    )
    environment = EphemeralEnvironment.objects.get(request=created)
    if live:
        EphemeralEnvironment.objects.filter(pk=environment.pk).update(state=EnvironmentState.LIVE)
        environment.refresh_from_db()
    return environment


def member(demo_world, role=Role.MEMBER, tenant=None):
    return MembershipFactory(
        tenant=tenant or demo_world["tenant"], role=role, user=UserFactory()
    ).user


# --- the tenant's page ----------------------------------------------------------------------


def test_tenant_page_lists_running_environments_with_their_expiry(client, demo_world):
    environment = start(demo_world)
    ended = start(demo_world, env_slug="review-7")
    EphemeralEnvironment.objects.filter(pk=ended.pk).update(state=EnvironmentState.ENDED)
    EphemeralEnvironment.objects.filter(pk=environment.pk).update(warned_at=timezone.now())
    client.force_login(demo_world["developer"])

    page = client.get("/tenants/payments/").content.decode()

    assert f'href="/environments/{environment.pk}/"' in page
    assert "payments-checkout-review-42" in page
    assert "feature/new-cart" in page and "!42" in page
    assert f"{environment.expires_at:%Y-%m-%d %H:%M} UTC" in page
    assert "in 1\xa0day, 23\xa0hours" in page  # the demo review tier's 2d default
    assert ">warned</span>" in page
    assert f'href="/environments/{ended.pk}/"' not in page
    assert 'href="/tenants/payments/environment-rules/"' in page
    assert 'href="/tenants/payments/request/ephemeral/"' in page


# --- an environment's page ------------------------------------------------------------------


def test_environment_page_shows_its_variables_namespace_and_lifetime(client, demo_world):
    environment = start(demo_world, ttl="2h")
    client.force_login(demo_world["developer"])

    page = client.get(f"/environments/{environment.pk}/").content.decode()

    for shown in (
        "checkout",
        "review-42",
        "feature/new-cart",
        "!42",
        f'href="/namespaces/{environment.namespace_id}/"',
        "payments-checkout-review-42",
        "the default template",
        f"{environment.expires_at:%Y-%m-%d %H:%M} UTC",
        f"{environment.max_expires_at:%Y-%m-%d %H:%M} UTC",
        f'href="/requests/{environment.request_id}/"',
        "Its own: deleted when it ends",
    ):
        assert shown in page, shown
    assert "Extend</button>" in page and "End now</button>" in page


def test_creator_extends_the_environment(client, demo_world):
    environment = start(demo_world, ttl="2h")
    client.force_login(demo_world["developer"])

    response = client.post(f"/environments/{environment.pk}/extend/", {"ttl": "3d"}, follow=True)

    environment.refresh_from_db()
    assert response.redirect_chain == [(f"/environments/{environment.pk}/", 302)]
    assert abs(environment.expires_at - (timezone.now() + timedelta(days=3))) < timedelta(minutes=1)
    assert "now lives until" in response.content.decode()
    assert "environment.extend" in response.content.decode()  # its history
    assert AuditEvent.objects.filter(action="environment.extend").count() == 1


def test_extension_past_the_maximum_is_refused_with_the_reason_and_keeps_the_ttl(
    client, demo_world
):
    environment = start(demo_world, ttl="2h")
    client.force_login(demo_world["developer"])

    response = client.post(f"/environments/{environment.pk}/extend/", {"ttl": "30d"})

    page = response.content.decode()
    before = environment.expires_at
    environment.refresh_from_db()
    assert response.status_code == 200
    assert "its tier&#x27;s maximum TTL" in page and "ask for at most" in page
    assert 'value="30d"' in page
    assert environment.expires_at == before


def test_a_ttl_that_is_no_duration_is_explained(client, demo_world):
    environment = start(demo_world)
    client.force_login(demo_world["developer"])
    page = client.post(f"/environments/{environment.pk}/extend/", {"ttl": "soon"})
    assert "is not a duration" in page.content.decode()


def test_a_member_who_did_not_create_it_may_end_but_not_extend_it(client, demo_world):
    environment = start(demo_world)
    client.force_login(member(demo_world))

    page = client.get(f"/environments/{environment.pk}/").content.decode()

    assert "Extend</button>" not in page
    assert "End now</button>" in page
    assert client.post(f"/environments/{environment.pk}/extend/", {"ttl": "1h"}).status_code == 403


@pytest.mark.parametrize("role", [Role.MEMBER, Role.VIEWER])
@pytest.mark.parametrize(
    "path", ["/environments/{pk}/", "/environments/{pk}/extend/", "/environments/{pk}/end/"]
)
def test_people_of_another_tenant_get_404(client, demo_world, role, path):
    environment = start(demo_world)
    client.force_login(member(demo_world, role, tenant=Tenant.objects.get(slug="search")))
    url = path.format(pk=environment.pk)
    response = client.get(url) if path.endswith("}/") else client.post(url, {"ttl": "1h"})
    assert response.status_code == 404


def test_ending_it_makes_an_end_request_linked_from_its_page(client, demo_world):
    environment = start(demo_world)
    client.force_login(demo_world["developer"])

    response = client.post(
        f"/environments/{environment.pk}/end/", {"reason": "Merged."}, follow=True
    )

    end = Request.objects.get(kind=RequestKind.END_ENVIRONMENT)
    environment.refresh_from_db()
    page = response.content.decode()
    assert end.payload["environment"] == environment.pk
    assert end.payload["reason"] == "Merged."
    assert environment.state == EnvironmentState.ENDING
    assert f"is ending: request #{end.pk}" in page
    assert f'href="/requests/{end.pk}/"' in page
    assert "End now</button>" not in page


def test_ending_one_already_ending_says_why_not_and_keeps_the_reason(client, demo_world):
    environment = start(demo_world)
    services.end_environment(
        environment_id=environment.pk, actor=demo_world["developer"], cause="ended"
    )
    client.force_login(demo_world["owner"])

    response = client.post(f"/environments/{environment.pk}/end/", {"reason": "Twice."})

    page = response.content.decode()
    assert response.status_code == 200
    assert f"Environment #{environment.pk} is ending, not live." in page
    assert "Twice.</textarea>" in page
    assert Request.objects.filter(kind=RequestKind.END_ENVIRONMENT).count() == 1


# --- the namespace it lives in ---------------------------------------------------------------


def test_a_namespace_page_lists_the_environments_living_in_it(client, demo_world):
    environment = start(demo_world)
    client.force_login(demo_world["developer"])
    page = client.get(f"/namespaces/{environment.namespace_id}/").content.decode()
    assert f"/environments/{environment.pk}/" in page
    assert f"{environment.project.name}/{environment.slug}" in page
