"""What a person chooses for themselves: which notifications they are e-mailed."""

from __future__ import annotations

from tenants import audit
from tenants.errors import InvalidInput
from tenants.models import User
from tenants.notifications import EVENT_CHOICES

KNOWN_EVENTS = [event for event, _ in EVENT_CHOICES]


def set_muted_notifications(*, user: User, muted: list[str], source_ip: str | None = None) -> User:
    """The events `user` is no longer e-mailed about (the tenant's own addresses and its
    webhook still hear everything: they are not this person's)."""
    unknown = sorted(set(muted) - set(KNOWN_EVENTS))
    if unknown:
        raise InvalidInput.of(
            {
                "muted_notifications": [
                    f"Unknown event(s): {', '.join(unknown)}; known: {', '.join(KNOWN_EVENTS)}."
                ]
            }
        )
    chosen = [event for event in KNOWN_EVENTS if event in set(muted)]
    before = list(user.muted_notifications or [])
    if chosen != before:
        user.muted_notifications = chosen
        user.save(update_fields=["muted_notifications"])
        audit.record(
            actor=user,
            action="user.notifications",
            obj=user,
            source_ip=source_ip,
            before={"muted": before},
            after={"muted": chosen},
        )
    return user
