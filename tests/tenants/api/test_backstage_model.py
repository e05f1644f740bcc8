"""Berth's catalog as Backstage itself judges it: every entity the demo's catalog holds (a
platform admin's view: every tenant, projects on each engine, namespaces of every tier, a
review app's, a person whose user name Backstage could not take) is run through
@backstage/catalog-model's entity policies and kind validators by node
(integrations/backstage/validate-catalog.mjs), and every reference between them resolves."""

from __future__ import annotations

import json
import subprocess

import pytest
import yaml

from tenants.choices import Role
from tenants.models import Membership, Project
from tests.support.api import api
from tests.support.backstage import CATALOG, INTEGRATION, add_namespace, node_with
from tests.support.factories import UserFactory

pytestmark = [pytest.mark.django_db, pytest.mark.processes]  # node

VALIDATOR = INTEGRATION / "validate-catalog.mjs"


def backstage_says(entities: list[dict]) -> dict:
    ran = subprocess.run(
        [node_with("@backstage/catalog-model"), str(VALIDATOR)],
        input=json.dumps(entities),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    return json.loads(ran.stdout)


def test_the_demos_catalog_passes_backstages_own_validation(backstage_estate):
    cart = Project.objects.create(
        tenant=backstage_estate.payments, name="cart", gitops_engine="argocd_kargo"
    )
    feed = Project.objects.create(tenant=backstage_estate.search, name="feed", gitops_engine="flux")
    add_namespace(backstage_estate.payments, "payments-cart-staging", "staging", project=cart)
    add_namespace(backstage_estate.search, "search-feed-dev", project=feed)
    add_namespace(backstage_estate.payments, "payments-shop-review-42", "review")
    outsider = UserFactory(username="jo@example.com")
    Membership.objects.create(user=outsider, tenant=backstage_estate.payments, role=Role.MEMBER)

    body = api(backstage_estate.admin).get(CATALOG).content
    entities = [doc for doc in yaml.safe_load_all(body) if doc]
    assert {e["kind"] for e in entities} == {"Group", "System", "Component", "Resource"}

    said = backstage_says(entities)

    assert said == {"checked": len(entities), "errors": []}
    # Every reference names an entity of the same catalog.
    known = {
        f"{e['kind'].lower()}:{e['metadata'].get('namespace', 'default')}/{e['metadata']['name']}"
        for e in entities
    }
    named = [
        ref
        for e in entities
        for ref in (
            e["spec"].get("owner"),
            e["spec"].get("system"),
            *e["spec"].get("dependsOn", []),
        )
        if ref
    ]
    assert named and set(named) <= known
    (review,) = [e for e in entities if e["metadata"]["name"] == "payments-shop-review-42"]
    assert review["spec"]["lifecycle"] == "experimental"


def test_the_validator_is_not_a_rubber_stamp():
    """What Backstage refuses, the check refuses: a name with a space, a Resource without
    an owner."""
    said = backstage_says(
        [
            {
                "apiVersion": "backstage.io/v1alpha1",
                "kind": "Group",
                "metadata": {"name": "pay ments"},
                "spec": {"type": "team", "children": []},
            },
            {
                "apiVersion": "backstage.io/v1alpha1",
                "kind": "Resource",
                "metadata": {"name": "payments-shop-dev", "namespace": "sandbox"},
                "spec": {"type": "kubernetes-namespace"},
            },
        ]
    )
    assert [error["entity"] for error in said["errors"]] == [
        "Group:default/pay ments",
        "Resource:sandbox/payments-shop-dev",
    ]
