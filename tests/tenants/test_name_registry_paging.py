"""The names registry's page at size: a hundred names a page, cut by position (cluster,
then name) like the audit log, with links that keep the filters; a deep page costs the
queries of the first, and a page link Berth did not make is a 400 that says so."""

from __future__ import annotations

from django.db import connection
from django.test.utils import CaptureQueriesContext

from tenants.choices import NamePurpose
from tenants.models import Cluster, NamespaceClaim
from tenants.views.names import PAGE_SIZE


def hold(names_world, count: int, *, prefix: str = "payments-web", cluster=None) -> list[str]:
    """`count` live tier names of payments, numbered so their order is their number's."""
    names = [f"{prefix}{index:04d}-dev" for index in range(count)]
    NamespaceClaim.objects.bulk_create(
        NamespaceClaim(
            cluster=cluster or names_world["cluster"],
            name=name,
            purpose=NamePurpose.TIER,
            tenant=names_world["tenant"],
            app=name.split("-")[1],
            tier="dev",
        )
        for name in names
    )
    return names


def shown(response) -> list[str]:
    return [claim.name for claim in response.context["claims"]]


def test_the_registry_shows_a_hundred_names_a_page_and_walks_them_both_ways(client, names_world):
    names = hold(names_world, 250)
    client.force_login(names_world["admin"])
    query = {"tenant": "payments", "name": "payments-web"}

    first = client.get("/names/", query)
    assert shown(first) == names[:PAGE_SIZE] and PAGE_SIZE == 100
    assert not first.context["earlier"] and "tenant=payments" in first.context["later"]

    second = client.get("/names/" + first.context["later"])
    assert shown(second) == names[100:200]
    third = client.get("/names/" + second.context["later"])
    assert shown(third) == names[200:]
    assert not third.context["later"] and third.context["first"]
    page = third.content.decode()
    assert "Earlier names" in page and "Later names" not in page
    assert "name=payments-web" in third.context["earlier"]

    back = client.get("/names/" + third.context["earlier"])
    assert shown(back) == names[100:200]
    assert shown(client.get("/names/" + back.context["first"])) == names[:PAGE_SIZE]


def test_pages_run_from_one_cluster_into_the_next_in_name_order(client, names_world):
    other = Cluster.objects.create(name="zulu", api_url="https://zulu.example:6443")
    here = hold(names_world, 60, prefix="payments-here")
    there = hold(names_world, 60, prefix="payments-there", cluster=other)
    client.force_login(names_world["admin"])

    first = client.get("/names/", {"tenant": "payments", "purpose": "tier"})
    second = client.get("/names/" + first.context["later"])

    walked = [(c.cluster.name, c.name) for r in (first, second) for c in r.context["claims"]]
    expected = [("sandbox", name) for name in here] + [("zulu", name) for name in there]
    assert [pair for pair in walked if pair[1] in here + there] == expected
    assert walked == sorted(walked)


def test_a_deep_page_costs_the_queries_of_the_first(client, names_world):
    hold(names_world, 450)
    client.force_login(names_world["admin"])

    def visit(path: str):
        with CaptureQueriesContext(connection) as queries:
            response = client.get(path)
        assert response.status_code == 200
        return response, len(queries)

    page, first_cost = visit("/names/")
    costs = []
    for _ in range(3):
        page, cost = visit("/names/" + page.context["later"])
        costs.append(cost)
    # The first page reads its rows in one query; a later one also asks whether there is a
    # page before it (one EXISTS): no more, however deep.
    assert costs == [first_cost + 1] * 3
    assert first_cost <= 12


def test_a_page_link_the_registry_did_not_make_is_a_400_showing_the_first_names(
    client, names_world
):
    names = hold(names_world, 5)
    client.force_login(names_world["admin"])
    for made_up in ("made-up", "bnxzYW5kYm94", "cHxzYW5kYm94fHh8eQ"):
        response = client.get("/names/", {"cursor": made_up, "tenant": "payments"})
        assert response.status_code == 400
        assert "Not a page link the names registry gave out" in response.content.decode()
        assert set(names) <= set(shown(response))
