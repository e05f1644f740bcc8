"""A tier that sleeps on Rome's weekday evenings, and the moments the page, API and browser
tests of hibernation look at it: a Tuesday, 23:00 in Rome, asleep until 08:00 there."""

from __future__ import annotations

from datetime import UTC, datetime, time

from tenants.models import EnvironmentTier

ROME_NIGHT = datetime(2026, 3, 17, 22, 0, tzinfo=UTC)
ROME_NEXT_WAKE = datetime(2026, 3, 18, 7, 0, tzinfo=UTC)  # Wednesday 08:00 in Rome


def rome_evenings(slug: str = "dev") -> EnvironmentTier:
    """The tier's namespaces sleep from 20:00 to 08:00 in Rome, Monday to Friday."""
    EnvironmentTier.objects.filter(slug=slug).update(
        sleep_weekdays="1-5",
        sleep_at=time(20, 0),
        wake_at=time(8, 0),
        sleep_time_zone="Europe/Rome",
        wake_max_hours=12,
    )
    return EnvironmentTier.objects.get(slug=slug)
