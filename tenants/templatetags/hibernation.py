"""A namespace's sleep as people read it (`{% load hibernation %}`): its state now as a
badge (the lists and its page), its schedule in words, a moment in the schedule's own time
zone. The state comes from tenants.selectors.sleep.sleep_status, which reads the namespace,
its tier and its cluster only: lists select them with it, so a badge costs no query."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django import template
from django.utils import timezone

from tenants.choices import NamespaceState
from tenants.models import EnvironmentTier, Namespace
from tenants.selectors.sleep import SleepStatus, sleep_status
from tenants.sleep_schedules import Schedule, parse_weekdays

register = template.Library()

DAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


@register.filter
def sleep_of(namespace: Namespace) -> SleepStatus | None:
    """`{% with sleep=namespace|sleep_of %}`: its sleep now; None unless it is live."""
    if namespace.state != NamespaceState.ACTIVE:
        return None
    return sleep_status(namespace)


@register.inclusion_tag("tenants/_sleep_badge.html")
def sleep_badge(namespace: Namespace) -> dict:
    """`{% sleep_badge namespace %}`: asleep or awake, and until when (a list's cell)."""
    return {"sleep": sleep_of(namespace)}


def weekdays_words(text: str) -> str:
    """kube-green's weekdays as people say them: "1-5" Monday to Friday, "0,6" Saturday and
    Sunday, "*" every day; a run across the week's end reads as one (Friday to Monday)."""
    days = sorted(parse_weekdays(text))  # ISO: Monday 1 ... Sunday 7
    if len(days) == 7:
        return "every day"
    # Monday first, unless a run goes over Sunday into Monday: then it starts that run.
    start = 1
    if 1 in days and 7 in days:
        start = max(day for day in range(1, 8) if day not in days) + 1
    ordered = sorted(days, key=lambda day: (day - start) % 7)
    runs: list[list[int]] = []
    for day in ordered:
        if runs and (runs[-1][-1] % 7) + 1 == day:
            runs[-1].append(day)
        else:
            runs.append([day])
    parts: list[str] = []
    for run in runs:
        if len(run) >= 3:
            parts.append(f"{DAY_NAMES[run[0] - 1]} to {DAY_NAMES[run[-1] - 1]}")
        else:
            parts += [DAY_NAMES[day - 1] for day in run]
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"


@register.filter
def schedule_words(schedule: Schedule | None) -> str:
    """ "Goes to sleep at 20:00 and wakes at 08:00, Monday to Friday (Europe/Rome time);
    asleep through the other days"; what holds on the days it does not list follows from
    kube-green's rule: the state its last moment of the week left."""
    if schedule is None:
        return "Never sleeps."
    said = (
        f"Goes to sleep at {schedule.hhmm(schedule.sleep_at)} and wakes at "
        f"{schedule.hhmm(schedule.wake_at)}, {weekdays_words(schedule.weekdays)} "
        f"({schedule.time_zone} time)"
    )
    if len(parse_weekdays(schedule.weekdays)) < 7:
        overnight = schedule.sleep_at > schedule.wake_at
        said += "; asleep through the other days" if overnight else "; awake on the other days"
    return said + "."


@register.filter
def schedule_short(schedule: Schedule | None) -> str:
    """ "20:00 to 08:00, Monday to Friday, Europe/Rome"; "never sleeps" without one."""
    if schedule is None:
        return "never sleeps"
    return (
        f"{schedule.hhmm(schedule.sleep_at)} to {schedule.hhmm(schedule.wake_at)}, "
        f"{weekdays_words(schedule.weekdays)}, {schedule.time_zone}"
    )


@register.filter
def idle_words(hours: int) -> str:
    """An idle-sleeping tier's rule, as people read it."""
    return (
        f"Sleeps once {hours} hour{'s' if hours != 1 else ''} pass without a deploy (a deploy "
        "token minted for it), and wakes at the next."
    )


@register.filter
def tier_sleep_short(tier: EnvironmentTier) -> str:
    """What a tier's namespaces follow: its schedule, its idle sleep, or never."""
    schedule = tier.own_schedule()
    idle = tier.sleep_after_idle_hours
    if schedule is None and idle:
        return f"after {idle} hour{'s' if idle != 1 else ''} without a deploy"
    return schedule_short(schedule)


@register.filter
def in_zone(moment: datetime | None, zone: str) -> str:
    """`{{ until|in_zone:"Europe/Rome" }}`: the moment's local hour there, "Tue 21:00"."""
    if moment is None:
        return ""
    try:
        local = timezone.localtime(moment, ZoneInfo(zone))
    except (ZoneInfoNotFoundError, ValueError):
        return ""
    return local.strftime("%a %H:%M")
