"""The audit log's page: owners see their tenant's events only, developers nothing; its
CSV export is filtered and defuses formulas; its query count stays flat."""

import csv
import io

import pytest

from tenants.models import AuditEvent, Tenant
from tenants.views import audit as audit_views
from tests.support.audit_log import notes
from tests.support.tenants_pages import submit
from tests.support.workflow import ask_for_namespace


def test_audit_page_shows_owners_their_tenant_only_and_developers_nothing(client, demo_world):
    submit(demo_world)
    search = Tenant.objects.get(slug="search")
    ask_for_namespace(search, demo_world["outsider"], app="idx", tier="prod", cpu="1", memory="1Gi")
    client.force_login(demo_world["owner"])
    page = client.get("/audit/").content.decode()
    assert "payments" in page and ">search<" not in page

    client.force_login(demo_world["developer"])
    assert client.get("/audit/").status_code == 403


def test_audit_csv_export_is_filtered_and_defuses_formulas(client, demo_world):
    submit(demo_world)
    AuditEvent.objects.create(
        actor_label="=HYPERLINK(evil)",
        action="tenant.note",
        object_type="tenants.tenant",
        object_id="1",
        tenant=demo_world["tenant"],
    )
    client.force_login(demo_world["admin"])
    response = client.get("/audit/", {"format": "csv", "tenant": "payments"})

    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert rows[0][:3] == ["time", "actor", "action"]
    actors = {row[1] for row in rows[1:]}
    assert "'=HYPERLINK(evil)" in actors
    assert "dev" in actors
    assert all(row[6] == "payments" for row in rows[1:])


@pytest.mark.parametrize("rows", [1, 8])
def test_audit_query_count_stays_flat(client, demo_world, django_assert_max_num_queries, rows):
    for index in range(rows):
        submit(demo_world, app=f"app{index}")
    client.force_login(demo_world["admin"])
    with django_assert_max_num_queries(8):
        assert client.get("/audit/").status_code == 200


def test_audit_page_shows_a_hundred_events_and_links_to_older_ones_keeping_filters(
    client, demo_world
):
    notes(130, tenant=demo_world["tenant"])
    client.force_login(demo_world["admin"])
    first = client.get("/audit/", {"action": "tenant.note"})
    assert first.context["events"][0].object_id == "129" and len(first.context["events"]) == 100
    assert not first.context["newer"] and "action=tenant.note" in first.context["older"]

    second = client.get("/audit/" + first.context["older"])
    shown = [event.object_id for event in second.context["events"]]
    assert shown == [str(index) for index in range(29, -1, -1)]
    assert not second.context["older"] and second.context["newest"]
    page = second.content.decode()
    assert "Newer events" in page and "Older events" not in page

    back = client.get("/audit/" + second.context["newer"])
    assert [e.pk for e in back.context["events"]] == [e.pk for e in first.context["events"]]


def test_a_page_link_berth_did_not_make_shows_the_newest_events_and_says_so(client, demo_world):
    submit(demo_world)
    client.force_login(demo_world["admin"])
    response = client.get("/audit/", {"cursor": "made-up"})
    assert response.status_code == 400
    assert "Not a page link the audit log gave out" in response.content.decode()
    assert response.context["events"]  # the newest events, not an empty or error page


def test_the_export_walks_the_whole_log_a_chunk_at_a_time_each_event_once(
    client, demo_world, monkeypatch
):
    monkeypatch.setattr(audit_views, "EXPORT_CHUNK", 3)
    notes(10)
    client.force_login(demo_world["admin"])
    response = client.get("/audit/", {"format": "csv", "action": "tenant.note"})
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert [row[4] for row in rows[1:]] == [str(index) for index in range(9, -1, -1)]
