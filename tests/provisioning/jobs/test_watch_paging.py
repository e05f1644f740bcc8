"""The watcher lists in pages (limit / continue) so that it never holds a whole kind at
once: a listing spread over many pages compares as one, and a continue token the server
compacted away (410) starts the listing again instead of losing the objects after it."""

from __future__ import annotations

import contextlib
import dataclasses
import queue
import threading
from urllib.parse import parse_qs

import pytest

from provisioning.jobs.watch_streams import SELECTOR, Figures, KindStream, Listed
from provisioning.kube import KubeError, cluster_client
from provisioning.plan import MANAGED_BY
from tests.support.cluster import as_admin
from tests.support.watching import (
    QUICK,
    eventually,
    finding,
    repairing,
    synced,
    watched_world,
    watcher,
)

ONE_A_PAGE = dataclasses.replace(QUICK, page_size=1, queue_size=1)
DNS_POLICY = (
    "/apis/networking.k8s.io/v1/namespaces/payments-shop-dev/networkpolicies/berth-allow-dns"
)


@pytest.fixture
def watch_world(transactional_db, sandbox):
    return watched_world(sandbox)


def lists_of(sandbox, resource: str) -> list[dict[str, list[str]]]:
    return [
        parse_qs(r["query"])
        for r in sandbox.requests()
        if r["path"].endswith(resource) and "watch=true" not in r["query"]
    ]


def labelled_config_maps(sandbox, count: int) -> set[str]:
    names = {f"extra-{number}" for number in range(count)}
    for name in names:
        sandbox.upsert(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {
                    "name": name,
                    "namespace": "payments-shop-dev",
                    "labels": {MANAGED_BY: "berth"},
                },
                "data": {"a": "b"},
            }
        )
    return names


def test_a_listing_over_pages_of_one_object_finds_what_is_missing_and_nothing_else(
    watch_world, sandbox
):
    namespace = watch_world["namespace"]
    repairing(namespace, False)
    as_admin(sandbox, "DELETE", DNS_POLICY)  # gone before the watcher's first LIST
    sandbox.clear_requests()
    with watcher(timing=ONE_A_PAGE):
        synced(watch_world["cluster"])
        missing = eventually(
            lambda: finding(namespace, "NetworkPolicy/payments-shop-dev/berth-allow-dns"),
            "the deletion found by the listing",
        )
        namespace.refresh_from_db()
        drift = namespace.drift
    assert missing["status"] == "missing"
    # The namespace's other objects sat on other pages: none of them is taken for missing.
    assert [f["object"] for f in drift] == ["NetworkPolicy/payments-shop-dev/berth-allow-dns"]
    role_bindings = lists_of(sandbox, "/rolebindings")
    assert all(query["limit"] == ["1"] for query in role_bindings)
    assert any("continue" in query for query in role_bindings), "the RoleBindings took pages"


def test_a_continue_token_compacted_away_lists_again_from_the_start(watch_world, sandbox):
    """The stream is held with its second page (the comparison is behind: its queue holds
    one page); meanwhile the server's history is compacted, so the token of the page after
    is too old. The stream starts the listing again and hands over every object."""
    wanted = labelled_config_maps(sandbox, 4)
    client = cluster_client(watch_world["cluster"])
    out: queue.Queue = queue.Queue(maxsize=1)
    stop = threading.Event()
    figures = Figures()
    stream = KindStream(
        client, "v1", "ConfigMap", out=out, stop=stop, figures=figures, timing=ONE_A_PAGE
    )
    sandbox.clear_requests()
    stream.start()
    try:
        # Two pages read: the first in the queue, the second waiting to go in.
        eventually(lambda: len(lists_of(sandbox, "/configmaps")) == 2, "two pages read")
        sandbox.upsert(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "unlabelled", "namespace": "payments-shop-dev"},
            }
        )
        sandbox.store.events.compact()

        pages: list[Listed] = []
        while not (pages and pages[-1].last):
            pages.append(out.get(timeout=30))
    finally:
        stop.set()
        while stream.is_alive():
            with contextlib.suppress(queue.Empty):
                out.get(timeout=0.1)
    starts = [index for index, page in enumerate(pages) if page.first]
    assert len(starts) == 2, "the listing started again after the 410"
    listing = [obj["metadata"]["name"] for page in pages[starts[-1] :] for obj in page.items]
    assert wanted <= set(listing)
    assert len(listing) == len(set(listing)), "each object handed over once in a listing"
    assert figures.relists == 1, "only the listing that ended counts as one"
    expired = [r for r in sandbox.requests() if r["status"] == 410]
    assert expired and "continue=" in expired[0]["query"]


def test_an_expired_continue_token_is_a_410_the_client_reports(watch_world, sandbox):
    labelled_config_maps(sandbox, 2)
    pages = cluster_client(watch_world["cluster"]).list_pages(
        "v1", "ConfigMap", label_selector=SELECTOR, page_size=1
    )
    first_items, first_version, last = next(pages)
    assert len(first_items) == 1 and first_version and not last
    _, second_version, _ = next(pages)
    assert second_version == first_version, "every page carries the listing's version"
    sandbox.upsert(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "unlabelled", "namespace": "payments-shop-dev"},
        }
    )
    sandbox.store.events.compact()
    with pytest.raises(KubeError) as raised:
        next(pages)
    assert raised.value.status == 410
    assert "continue parameter is too old" in raised.value.message


def test_listed_and_watched_objects_come_without_their_field_managers(watch_world, sandbox):
    """managedFields are most of what a LIST of applied objects weighs and nothing the
    watcher compares: the client drops them as it reads, so pages and events held in the
    watcher's queue are the smaller for it."""
    stored = as_admin(sandbox, "GET", DNS_POLICY)
    assert stored["metadata"]["managedFields"], "applied by Berth: its field manager is kept"
    client = cluster_client(watch_world["cluster"])
    pages = list(
        client.list_pages(
            "networking.k8s.io/v1", "NetworkPolicy", label_selector=SELECTOR, page_size=500
        )
    )
    listed = [obj for items, _, _ in pages for obj in items]
    assert DNS_POLICY.rsplit("/", 1)[1] in {obj["metadata"]["name"] for obj in listed}
    assert [last for _, _, last in pages] == [True]
    assert not [obj for obj in listed if "managedFields" in obj["metadata"]]

    stored["metadata"]["labels"]["edited"] = "by-hand"
    as_admin(sandbox, "PUT", DNS_POLICY, stored)
    events = client.watch(
        "networking.k8s.io/v1",
        "NetworkPolicy",
        label_selector=SELECTOR,
        resource_version=pages[0][1],
        timeout_seconds=30,
    )
    edited = next(e for e in events if e["type"] == "MODIFIED")
    events.close()
    assert edited["object"]["metadata"]["labels"]["edited"] == "by-hand"
    assert "managedFields" not in edited["object"]["metadata"]
