"""Berth's Backstage catalog (GET /api/v1/backstage/catalog-info.yaml and the per-tenant
/api/v1/backstage/<slug>/catalog-info.yaml), read with an API token as Backstage's URL
reader would: a Group and a System per tenant the caller may see, a Component per project,
a Resource per live namespace (in the Backstage namespace of its cluster) with its links and
the Kubernetes plugin's annotations; nothing of another tenant; 304 while nothing changed;
four queries however many namespaces. (Backstage's own validators: test_backstage_model.py.)"""

from __future__ import annotations

import pytest
import yaml
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tenants.models import Namespace
from tests.support.api import api, assert_problem
from tests.support.backstage import CATALOG, add_namespace

pytestmark = pytest.mark.django_db


def entities(client, path: str = CATALOG) -> list[dict]:
    response = client.get(path)
    assert response.status_code == 200, response.content[:500]
    assert response["Content-Type"] == "application/yaml; charset=utf-8"
    return [doc for doc in yaml.safe_load_all(response.content) if doc]


def refs(found: list[dict]) -> set[str]:
    return {
        f"{e['kind'].lower()}:{e['metadata'].get('namespace', 'default')}/{e['metadata']['name']}"
        for e in found
    }


def test_a_member_reads_their_tenants_entities_and_nothing_of_another(backstage_estate):
    found = entities(api(backstage_estate.member))  # dev, a member of payments
    assert refs(found) == {
        "group:default/payments",
        "system:default/payments",
        "component:default/payments-shop",
        "resource:sandbox/payments-shop-dev",
        "resource:sandbox/payments-shop-prod",
    }
    assert {e["metadata"]["annotations"]["berth.dev/tenant"] for e in found} == {"payments"}
    assert "search" not in yaml.safe_dump_all(found)


def test_the_entities_say_who_owns_what_and_link_back(backstage_estate):
    found = {
        e["kind"]: e
        for e in entities(
            api(backstage_estate.owner), "/api/v1/backstage/payments/catalog-info.yaml"
        )
        if e["kind"] != "Resource"
    }
    group, system, component = found["Group"], found["System"], found["Component"]
    assert group["spec"]["members"] == ["dev", "olivia", "vera"]
    assert group["metadata"]["links"][0]["url"] == "http://testserver/tenants/payments/"
    assert system["spec"]["owner"] == "group:default/payments"
    assert component["spec"]["owner"] == "group:default/payments"
    assert component["spec"]["system"] == "system:default/payments"
    assert component["spec"]["dependsOn"] == [
        "resource:sandbox/payments-shop-dev",
        "resource:sandbox/payments-shop-prod",
    ]
    assert component["metadata"]["annotations"]["backstage.io/kubernetes-id"] == "payments-shop"

    (prod,) = [
        e
        for e in entities(api(backstage_estate.owner))
        if e["metadata"]["name"] == "payments-shop-prod"
    ]
    assert prod["spec"] == {
        "type": "kubernetes-namespace",
        "owner": "group:default/payments",
        "system": "system:default/payments",
        "lifecycle": "prod",
    }
    annotations = prod["metadata"]["annotations"]
    assert annotations["backstage.io/kubernetes-namespace"] == "payments-shop-prod"
    assert annotations["backstage.io/kubernetes-id"] == "payments-shop"
    namespace = Namespace.objects.get(name="payments-shop-prod")
    assert prod["metadata"]["links"] == [
        {
            "url": f"http://testserver/namespaces/{namespace.pk}/",
            "title": "Berth",
            "icon": "dashboard",
        },
        {
            "url": "https://argocd.example.com/applications/payments-apps/payments-shop-prod",
            "title": "Argo CD",
        },
    ]


def test_another_tenants_catalog_is_404_as_if_there_were_none(backstage_estate):
    member = api(backstage_estate.member)
    assert_problem(member.get("/api/v1/backstage/search/catalog-info.yaml"), 404)
    assert_problem(member.get("/api/v1/backstage/nobody/catalog-info.yaml"), 404)
    assert_problem(api().get(CATALOG), 401)


def test_a_platform_admin_reads_every_tenant(backstage_estate):
    found = refs(entities(api(backstage_estate.admin)))
    assert {
        "group:default/payments",
        "group:default/search",
        "resource:sandbox/search-web-dev",
    } <= found


def test_a_token_without_the_read_scope_is_refused(backstage_estate):
    assert_problem(api(backstage_estate.member, scopes=["request"]).get(CATALOG), 403)


def test_a_reader_that_polls_gets_304_until_something_changes(backstage_estate):
    client = api(backstage_estate.member)
    first = client.get(CATALOG)
    etag = first["ETag"]
    again = client.get(CATALOG, HTTP_IF_NONE_MATCH=etag)
    assert again.status_code == 304 and again["ETag"] == etag and again.content == b""
    add_namespace(backstage_estate.payments, "payments-shop-staging", "staging")
    changed = client.get(CATALOG, HTTP_IF_NONE_MATCH=etag)
    assert changed.status_code == 200 and changed["ETag"] != etag
    assert b"payments-shop-staging" in changed.content


def test_the_catalog_costs_the_same_queries_for_two_namespaces_or_twenty(backstage_estate):
    client = api(backstage_estate.admin)
    client.get(CATALOG)  # the token's first use is recorded once
    with CaptureQueriesContext(connection) as few:
        client.get(CATALOG)
    for number in range(18):
        add_namespace(backstage_estate.search, f"search-more-{number}")
    with CaptureQueriesContext(connection) as many:
        body = client.get(CATALOG).content
    assert b"search-more-17" in body
    assert len(many) == len(few), "\n".join(q["sql"] for q in many.captured_queries)
