"""The audit log's pages are cut by position, not counted: walking them forward and back
shows every event once, in order, events of the same instant included; a page costs the
same queries at the start of the log as deep in it, and none of them counts the log."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tenants.errors import InvalidInput
from tenants.filtersets import AuditEventFilterSet
from tenants.models import AuditEvent
from tenants.selectors import AuditCursor, audit_page

START = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def logged(*moments: datetime, actor: str = "pat") -> list[AuditEvent]:
    """One event at each moment (repeat a moment for events of the same instant)."""
    made = []
    for moment in moments:
        with time_machine.travel(moment, tick=False):
            made.append(
                AuditEvent.objects.create(
                    actor_label=actor, action="tenant.note", object_type="t", object_id="1"
                )
            )
    return made


@pytest.fixture
def log(db) -> list[AuditEvent]:
    """23 events, newest last, three of them at one instant."""
    moments = [START + timedelta(minutes=index) for index in range(20)]
    moments[7:7] = [moments[7]] * 3
    return logged(*moments)


def walk(events, *, size: int, oldest_first: bool = False) -> list[list[int]]:
    pages, cursor = [], None
    while True:
        page = audit_page(events, cursor=cursor, size=size, oldest_first=oldest_first)
        pages.append([event.pk for event in page.events])
        if page.next is None:
            return pages
        cursor = AuditCursor.decode(page.next.encode())


def newest_first(events: list[AuditEvent]) -> list[int]:
    return [e.pk for e in sorted(events, key=lambda e: (e.created_at, e.pk), reverse=True)]


@pytest.mark.parametrize("size", [1, 4, 5, 23, 50])
def test_walking_forward_shows_every_event_once_newest_first(log, size):
    pages = walk(AuditEvent.objects.all(), size=size)
    assert [pk for page in pages for pk in page] == newest_first(log)
    assert all(len(page) == size for page in pages[:-1])


def test_oldest_first_walks_the_same_events_the_other_way(log):
    pages = walk(AuditEvent.objects.all(), size=4, oldest_first=True)
    assert [pk for page in pages for pk in page] == newest_first(log)[::-1]


def test_previous_from_each_page_gives_back_the_page_before_it(log):
    events = AuditEvent.objects.all()
    seen, cursor = [], None
    while True:
        page = audit_page(events, cursor=cursor, size=4)
        seen.append(page)
        if page.next is None:
            break
        cursor = page.next
    assert seen[0].previous is None
    for before, page in zip(seen, seen[1:], strict=False):
        back = audit_page(events, cursor=page.previous, size=4)
        assert [e.pk for e in back.events] == [e.pk for e in before.events]
        assert back.next is not None and (back.previous is None) == (before is seen[0])


def test_new_events_at_the_top_do_not_shift_the_pages_behind(log):
    events = AuditEvent.objects.all()
    first = audit_page(events, size=5)
    second = [e.pk for e in audit_page(events, cursor=first.next, size=5).events]
    logged(START + timedelta(days=1), START + timedelta(days=1))
    assert [e.pk for e in audit_page(events, cursor=first.next, size=5).events] == second
    assert audit_page(events, cursor=first.previous or first.next, size=5).previous is not None


def test_a_cursor_past_the_end_gives_an_empty_page_with_a_way_back(log):
    oldest = min(log, key=lambda e: (e.created_at, e.pk))
    page = audit_page(AuditEvent.objects.all(), cursor=AuditCursor.at(oldest, forward=True))
    assert page.events == [] and page.next is None
    back = audit_page(AuditEvent.objects.all(), cursor=page.previous, size=3)
    assert [e.pk for e in back.events] == newest_first(log)[-4:-1]  # those before it


@pytest.mark.parametrize(
    "text",
    ["", "garbage!", "bnwx", AuditCursor(START, 1).encode()[:-3], "eHw=", "bnwyMDI2LTAzLTAxfDE"],
)
def test_a_cursor_berth_did_not_give_out_is_refused_on_its_field(text):
    with pytest.raises(InvalidInput) as refused:
        AuditCursor.decode(text)
    assert list(refused.value.field_errors) == ["cursor"]


def test_a_cursor_reads_back_as_written():
    cursor = AuditCursor(START.replace(microsecond=123456), 987654321, forward=False)
    assert AuditCursor.decode(cursor.encode()) == cursor


def test_a_page_deep_in_the_log_costs_what_the_first_does_and_nothing_counts(db):
    log = logged(*[START + timedelta(seconds=index) for index in range(60)])
    events = AuditEvent.objects.all()
    costs = []
    for cursor in (None, AuditCursor.at(log[40], forward=True)):
        with CaptureQueriesContext(connection) as queries:
            audit_page(events, cursor=cursor, size=10)
        costs.append(len(queries))
        assert not any("COUNT(" in query["sql"].upper() for query in queries.captured_queries)
    assert costs == [1, 2]


def test_days_are_bounds_on_the_time_itself(db):
    day = date(2026, 3, 1)
    logged(
        datetime(2026, 2, 28, 23, 59, 59, tzinfo=UTC),
        datetime(2026, 3, 1, 0, 0, tzinfo=UTC),
        datetime(2026, 3, 1, 23, 59, 59, 999999, tzinfo=UTC),
        datetime(2026, 3, 2, 0, 0, tzinfo=UTC),
    )

    def kept(**params: str) -> int:
        return AuditEventFilterSet(params, queryset=AuditEvent.objects.all()).qs.count()

    assert kept(since=str(day), until=str(day)) == 2
    assert kept(since="2026-03-02") == 1 and kept(until="2026-02-28") == 1
    assert kept(until="9999-12-31") == 4 and kept(since="0001-01-01") == 4
