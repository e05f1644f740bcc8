"""The access grants' lists, page and API, cost the same number of queries however many
grants they show (each person, namespace, tenant and request read with its grant)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tenants import services
from tenants.choices import NamespaceState, Role
from tenants.models import Cluster, EnvironmentTier, Membership, Namespace
from tests.support.api import api
from tests.support.factories import UserFactory


@pytest.fixture
def namespaces(demo_world) -> list[Namespace]:
    tier, cluster = EnvironmentTier.objects.get(slug="dev"), Cluster.objects.get(name="sandbox")
    return [
        Namespace.objects.create(
            name=f"payments-app{n}-dev",
            tenant=demo_world["tenant"],
            tier=tier,
            cluster=cluster,
            cpu_millis=500,
            memory_mib=512,
            state=NamespaceState.ACTIVE,
        )
        for n in range(6)
    ]


def grants(demo_world, namespaces: list[Namespace], count: int) -> None:
    for namespace in namespaces[:count]:
        person = UserFactory(oidc_subject=f"sub-{namespace.name}")
        Membership.objects.create(user=person, tenant=demo_world["tenant"], role=Role.MEMBER)
        services.request_access(
            person=person, namespace=namespace.name, role="member", duration="1h", reason="look"
        )


def queries_of(read) -> int:
    with CaptureQueriesContext(connection) as taken:
        assert read().status_code == 200
    return len(taken)


def test_the_grants_page_costs_the_same_for_two_grants_as_for_six(demo_world, namespaces, client):
    client.force_login(demo_world["owner"])
    grants(demo_world, namespaces, 2)
    two = queries_of(lambda: client.get("/access/grants/"))
    grants(demo_world, namespaces[2:], 4)
    assert queries_of(lambda: client.get("/access/grants/")) == two


def test_the_grants_api_costs_the_same_for_two_grants_as_for_six(demo_world, namespaces):
    owner = api(demo_world["owner"])
    grants(demo_world, namespaces, 2)
    owner.get("/api/v1/access-grants/")  # the token's first use is noted once
    two = queries_of(lambda: owner.get("/api/v1/access-grants/"))
    grants(demo_world, namespaces[2:], 4)
    six = owner.get("/api/v1/access-grants/")
    assert len(six.json()["results"]) == 6
    assert queries_of(lambda: owner.get("/api/v1/access-grants/")) == two
