"""The audit log, as a page and as CSV."""

import csv

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import render

from tenants import selectors
from tenants.filtersets import AuditEventFilterSet
from tenants.quantities import payload_as_written
from tenants.views.support import page_at_cursor, page_link


@login_required
def audit_log(request: HttpRequest) -> HttpResponse:
    if not selectors.may_see_audit(request.user):
        raise PermissionDenied("The audit log is for platform admins and tenant owners.")
    events = AuditEventFilterSet(
        request.GET or None,
        queryset=selectors.audit_events_visible_to(request.user),
        request=request,
    )
    if request.GET.get("format") == "csv":
        return _audit_csv(events.qs)
    page, status, problem = page_at_cursor(
        request,
        lambda cursor: selectors.audit_page(events.qs, cursor=cursor, size=PAGE),
        selectors.AuditCursor.decode,
    )
    context = {
        "filter": events,
        "events": page.events,
        "problem": problem,
        "newer": page_link(request, page.previous) if page.previous else "",
        "older": page_link(request, page.next) if page.next else "",
        "newest": page_link(request, None) if page.previous else "",
    }
    return render(request, "tenants/audit_log.html", context, status=status)


# Events a page: a screenful or two; older ones are a link away, never a count away.
PAGE = 100


class _Echo:
    def write(self, value: str) -> str:
        return value


# A cell starting with one of these is a formula to a spreadsheet (a tab or carriage return
# is skipped over, and what follows it evaluated): OWASP's list for CSV injection.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _cell(value: object) -> str:
    text = "" if value is None else str(value)
    return f"'{text}" if text.startswith(FORMULA_STARTS) else text


def _for_people(record: dict | None) -> dict | str:
    """An event's before/after, with a request's payload as Kubernetes quantities."""
    if not record:
        return ""
    if isinstance(record.get("payload"), dict):
        return {**record, "payload": payload_as_written(record["payload"])}
    return record


def _every_event(events):
    """The events a page at a time, by position as the page reads them: each a small
    query an index answers at once, where one cursor over a million rows made the
    database plan (and compile) the whole scan before the first line went out."""
    page = selectors.audit_page(events, size=EXPORT_CHUNK)
    while True:
        yield from page.events
        if page.next is None:
            return
        page = selectors.audit_page(events, cursor=page.next, size=EXPORT_CHUNK)


EXPORT_CHUNK = 2000


def _audit_csv(events) -> StreamingHttpResponse:
    writer = csv.writer(_Echo())
    header = [
        "time",
        "actor",
        "action",
        "object_type",
        "object_id",
        "object",
        "tenant",
        "source_ip",
        "before",
        "after",
    ]

    def lines():
        yield writer.writerow(header)
        for event in _every_event(events):
            yield writer.writerow(
                [
                    _cell(value)
                    for value in (
                        event.created_at.isoformat(),
                        event.actor_label,
                        event.action,
                        event.object_type,
                        event.object_id,
                        event.object_repr,
                        event.tenant.slug if event.tenant else "",
                        event.source_ip,
                        _for_people(event.before),
                        _for_people(event.after),
                    )
                ]
            )

    response = StreamingHttpResponse(lines(), content_type="text/csv")
    response["Content-Disposition"] = 'attachment; filename="berth-audit.csv"'
    return response
