"""The audit log a person may read, a page at a time.

The log only grows (a million events is a few years of a busy platform), so its pages are
cut by position, not by number: a page is the events before (or after) the last one the
reader saw, in (created_at, id) order, which an index answers in the same time on the first
page as on the thousandth, and no page counts the whole log.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from datetime import datetime

from django.db.models import QuerySet

from tenants.choices import Role
from tenants.errors import InvalidInput
from tenants.models import AuditEvent, Membership, User
from tenants.selectors.rights import is_platform_admin


def audit_events_visible_to(user: User) -> QuerySet[AuditEvent]:
    """Platform admins see everything; tenant owners see their tenants' events."""
    events = AuditEvent.objects.select_related("tenant")
    if is_platform_admin(user):
        return events
    # The owned tenants as a list, not a subquery: `tenant_id = 7` walks the (tenant,
    # created_at) index to the newest 50, where a subquery made PostgreSQL scan the whole
    # log backwards for a tenant with few events.
    owned = list(
        Membership.objects.filter(user=user, role=Role.OWNER).values_list("tenant_id", flat=True)
    )
    return events.filter(tenant_id__in=owned)


def may_see_audit(user: User) -> bool:
    return is_platform_admin(user) or user.memberships.filter(role=Role.OWNER).exists()


BAD_CURSOR = "Not a page link the audit log gave out: start again from the first page."


@dataclass(frozen=True)
class AuditCursor:
    """Where a page starts: after (`forward`) or before the event at (created_at, id), in
    the order the reader reads the log."""

    created_at: datetime
    event_id: int
    forward: bool = True

    @classmethod
    def at(cls, event: AuditEvent, *, forward: bool) -> AuditCursor:
        return cls(created_at=event.created_at, event_id=event.pk, forward=forward)

    def facing(self, *, forward: bool) -> AuditCursor:
        return AuditCursor(self.created_at, self.event_id, forward=forward)

    def encode(self) -> str:
        text = f"{'n' if self.forward else 'p'}|{self.created_at.isoformat()}|{self.event_id}"
        return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")

    @classmethod
    def decode(cls, text: str) -> AuditCursor:
        """The cursor a page link carries; anything else is InvalidInput on `cursor`."""
        try:
            raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode()
            direction, when, event_id = raw.split("|")
            created_at = datetime.fromisoformat(when)
            if direction not in ("n", "p") or created_at.tzinfo is None:
                raise ValueError(raw)
            if not event_id.isascii() or not event_id.isdigit() or len(event_id) > 18:
                raise ValueError(raw)
            return cls(created_at=created_at, event_id=int(event_id), forward=direction == "n")
        except (ValueError, UnicodeDecodeError, binascii.Error) as error:
            raise InvalidInput({"cursor": [BAD_CURSOR]}) from error


@dataclass(frozen=True)
class AuditPage:
    events: list[AuditEvent]
    next: AuditCursor | None  # the page after this one, None on the last
    previous: AuditCursor | None  # the page before it, None on the first


def audit_page(
    events: QuerySet[AuditEvent],
    *,
    cursor: AuditCursor | None = None,
    size: int = 50,
    oldest_first: bool = False,
) -> AuditPage:
    """One page of `events` (already filtered and scoped), newest first unless
    `oldest_first`: at most two queries, whatever the size of the log."""
    if cursor is None:
        rows = list(_ordered(events, oldest_first)[: size + 1])
        more = len(rows) > size
        rows = rows[:size]
        return AuditPage(rows, AuditCursor.at(rows[-1], forward=True) if more else None, None)
    forward = cursor.forward
    read = _ordered(_beyond(events, cursor, oldest_first == forward), oldest_first == forward)
    rows = list(read[: size + 1])
    more_read, rows = len(rows) > size, rows[:size]
    if not forward:
        rows.reverse()
    # Each link starts from the row at that edge of the page (from the cursor's own position
    # when the page is empty); the side the page was not read from takes one EXISTS.
    previous = AuditCursor.at(rows[0], forward=False) if rows else cursor.facing(forward=False)
    following = AuditCursor.at(rows[-1], forward=True) if rows else cursor.facing(forward=True)
    back = previous if forward else following
    more_back = _beyond(events, back, oldest_first != forward).exists()
    more_after, more_before = (more_read, more_back) if forward else (more_back, more_read)
    return AuditPage(rows, following if more_after else None, previous if more_before else None)


def _ordered(events: QuerySet[AuditEvent], oldest_first: bool) -> QuerySet[AuditEvent]:
    if oldest_first:
        return events.order_by("created_at", "id")
    return events.order_by("-created_at", "-id")


def _beyond(
    events: QuerySet[AuditEvent], cursor: AuditCursor, oldest_first: bool
) -> QuerySet[AuditEvent]:
    """The events strictly past the cursor's position, in that order. The bound on
    created_at alone is what an index seeks to; the exclusion settles events of the same
    instant by id."""
    when, event_id = cursor.created_at, cursor.event_id
    if oldest_first:
        return events.filter(created_at__gte=when).exclude(created_at=when, id__lte=event_id)
    return events.filter(created_at__lte=when).exclude(created_at=when, id__gte=event_id)
