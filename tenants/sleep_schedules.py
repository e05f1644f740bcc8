"""Sleep schedules, as kube-green's SleepInfo says them: on the weekdays listed (`*`, `1-5`,
`0,6`; 0 is Sunday), a namespace goes to sleep at `sleep_at` and wakes at `wake_at` in its
time zone. Both moments happen only on listed days, so `1-5` with 20:00 / 08:00 sleeps from
Friday evening to Monday morning. Pure: no model, no clock of its own."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

WEEKDAYS = re.compile(r"\*|[0-6](-[0-6])?(,[0-6](-[0-6])?)*")
# Far enough back and ahead to meet a listed day twice, whatever the list.
_HORIZON_DAYS = 8


def weekdays_problem(text: str) -> str:
    if not WEEKDAYS.fullmatch(text or ""):
        return 'Weekdays as kube-green writes them: "*", "1-5" or "0,6" (0 is Sunday).'
    for part in text.split(","):
        first, _, last = part.partition("-")
        if last and int(last) < int(first):
            return f'"{part}" runs backwards: write the smaller day first.'
    return ""


def time_zone_problem(name: str) -> str:
    if name not in available_timezones():
        return f'"{name}" is not an IANA time zone (e.g. "Europe/Rome", "UTC").'
    return ""


def parse_weekdays(text: str) -> frozenset[int]:
    """The ISO weekdays (Monday 1 ... Sunday 7) a kube-green weekday list names."""
    if text == "*":
        return frozenset(range(1, 8))
    days: set[int] = set()
    for part in text.split(","):
        first, _, last = part.partition("-")
        days.update(range(int(first), int(last or first) + 1))
    return frozenset(7 if day == 0 else day for day in days)


@dataclass(frozen=True)
class Schedule:
    weekdays: str  # kube-green's text, kept as written
    sleep_at: time
    wake_at: time
    time_zone: str

    def problems(self) -> dict[str, str]:
        found = {"sleep_weekdays": weekdays_problem(self.weekdays)}
        found["sleep_time_zone"] = time_zone_problem(self.time_zone)
        if self.sleep_at == self.wake_at:
            found["wake_at"] = "Waking at the moment it sleeps would never sleep."
        return {field: problem for field, problem in found.items() if problem}

    @property
    def zone(self) -> ZoneInfo:
        try:
            return ZoneInfo(self.time_zone)
        except (ZoneInfoNotFoundError, ValueError):
            return ZoneInfo("UTC")

    def hhmm(self, moment: time) -> str:
        return moment.strftime("%H:%M")

    def _moments(self, first: date, days: int) -> list[tuple[datetime, bool]]:
        """(moment, asleep after it) for each sleep and wake on listed days, in order."""
        listed = parse_weekdays(self.weekdays)
        found = []
        for offset in range(days):
            day = first + timedelta(days=offset)
            if day.isoweekday() in listed:
                found.append((datetime.combine(day, self.sleep_at, tzinfo=self.zone), True))
                found.append((datetime.combine(day, self.wake_at, tzinfo=self.zone), False))
        return sorted(found)

    def asleep_at(self, at: datetime) -> bool:
        """Whether the schedule holds the namespace asleep at `at`: what its last moment
        before then said (awake when none happened within a week)."""
        local = at.astimezone(self.zone).date()
        before = [
            asleep
            for moment, asleep in self._moments(local - timedelta(days=_HORIZON_DAYS), 9)
            if moment <= at
        ]
        return before[-1] if before else False

    def next_change(self, at: datetime) -> datetime | None:
        """The first moment after `at` at which the schedule changes the state `at` has."""
        now = self.asleep_at(at)
        local = at.astimezone(self.zone).date()
        for moment, asleep in self._moments(local, _HORIZON_DAYS + 1):
            if moment > at and asleep != now:
                return moment
        return None

    def next_sleep(self, at: datetime) -> datetime | None:
        """The first moment after `at` at which the schedule puts the namespace to sleep."""
        local = at.astimezone(self.zone).date()
        for moment, asleep in self._moments(local, _HORIZON_DAYS + 1):
            if moment > at and asleep:
                return moment
        return None
