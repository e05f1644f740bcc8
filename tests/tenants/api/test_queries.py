"""List endpoints make the same number of queries for 1 row as for 10 (no N+1)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tenants import selectors
from tenants.choices import NamespaceState
from tenants.models import Cluster, EnvironmentTier, Namespace, Project, Request, Run, Tenant
from tests.support.api import api, submit
from tests.support.workflow import ask_for_environment


def grow(api_world, kind: str, count: int, start: int = 0) -> str:
    """`count` rows of `kind` (numbered from `start`); returns the list's path."""
    dev = EnvironmentTier.objects.get(slug="dev")
    sandbox = Cluster.objects.get(name="sandbox")
    project, _ = Project.objects.get_or_create(tenant=api_world.payments, name="billing")
    if kind in ("requests", "audit-events"):
        for index in range(start, start + count):
            submit(api_world, app=f"app{index}")
    elif kind in ("namespaces", "environments"):
        for index in range(start, start + count):
            Namespace.objects.create(
                name=f"payments-app{index}-dev",
                tenant=api_world.payments,
                tier=dev,
                cluster=sandbox,
                project=project,
                cpu_millis=100,
                memory_mib=128,
                state=NamespaceState.ACTIVE,
            )
    elif kind == "ephemeral-environments":
        for index in range(start, start + count):
            ask_for_environment(
                api_world.payments, api_world.member, project="billing", env_slug=f"review-{index}"
            )
        return "/api/v1/environments/"
    elif kind == "projects":
        for index in range(start, start + count - 1):
            Project.objects.create(tenant=api_world.payments, name=f"app{index}")
    elif kind == "runs":
        tenancy_request = Request.objects.filter(payload__app="many-runs").first() or submit(
            api_world, app="many-runs"
        )
        Run.objects.bulk_create(
            [Run(request=tenancy_request, steps=[{"kind": "Namespace"}]) for _ in range(count)]
        )
        return f"/api/v1/requests/{tenancy_request.pk}/runs/"
    elif kind == "tenants":
        for index in range(start, start + count - 2):
            tenant = Tenant.objects.create(slug=f"team{index}", name=f"Team {index}")
            tenant.allowed_tiers.set([dev])
            tenant.allowed_clusters.set([sandbox])
    elif kind == "clusters":
        for index in range(start, start + count - 1):
            Cluster.objects.create(name=f"cluster{index}")
    elif kind == "tiers":
        for index in range(start, start + count):
            EnvironmentTier.objects.create(slug=f"tier{index}", name=f"Tier {index}")
    if kind == "environments":
        return f"/api/v1/projects/{project.pk}/environments/"
    return f"/api/v1/{kind}/"


def queries_for(client, path: str) -> int:
    client.get(path)  # the token's first use records last_used_at once
    with CaptureQueriesContext(connection) as queries:
        response = client.get(path)
    assert response.status_code == 200, response.content
    return len(queries)


@pytest.mark.parametrize(
    "kind",
    [
        "requests",
        "namespaces",
        "projects",
        "environments",
        "ephemeral-environments",
        "runs",
        "audit-events",
        "tenants",
        "clusters",
        "tiers",
    ],
)
def test_list_queries_do_not_grow_with_rows(api_world, kind):
    path = grow(api_world, kind, 1)
    client = api(api_world.admin)  # sees every row of every kind
    few = queries_for(client, path)

    assert grow(api_world, kind, 9, start=1) == path
    many = queries_for(client, path)

    assert many == few, f"{kind}: {few} queries for a few rows, {many} for more"


def test_a_members_request_list_is_a_handful_of_queries(api_world):
    for index in range(10):
        submit(api_world, app=f"app{index}")
    client = api(api_world.member)
    # token lookup, count, page (tenant and requester joined)
    assert queries_for(client, "/api/v1/requests/") <= 3


def test_request_rows_are_what_drfs_field_walk_would_give(api_world):
    """The list's rows are built directly for speed; they must not drift from the fields
    the serializer (and so the OpenAPI schema) declares."""
    from datetime import timedelta

    from django.utils import timezone
    from rest_framework import serializers

    from tenants.api.serializers import RequestSerializer

    class FieldWalk(RequestSerializer):
        to_representation = serializers.ModelSerializer.to_representation

    submit(api_world, app="shop")
    submit(api_world, app="cart")
    Request.objects.filter(payload__app="cart").update(
        waiting_since=timezone.now() - timedelta(minutes=3),
        next_try_at=timezone.now(),
        wait_reason="sandbox: cluster unreachable",
        status_message="Waiting",
    )
    rows = list(Request.objects.select_related("tenant", "requester").order_by("id"))

    built = RequestSerializer(rows, many=True).data
    walked = FieldWalk(rows, many=True).data
    # What the list endpoint passes: the selector's rows, not model instances.
    listed = RequestSerializer(
        selectors.request_rows_visible_to(api_world.member).order_by("id"), many=True
    ).data

    assert [dict(row) for row in built] == [dict(row) for row in walked]
    assert [dict(row) for row in listed] == [dict(row) for row in walked]
    assert list(built[0]) == RequestSerializer.Meta.fields
    assert built[1]["waiting_since"].endswith("Z") and built[0]["waiting_since"] is None
