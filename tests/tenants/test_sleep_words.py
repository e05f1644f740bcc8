"""A sleep schedule as the pages say it (tenants/templatetags/hibernation.py): kube-green's
weekdays in words, runs over the week's end read as one, and what holds on the days the
schedule does not list."""

from __future__ import annotations

from datetime import UTC, datetime, time

import pytest

from tenants.sleep_schedules import Schedule
from tenants.templatetags.hibernation import in_zone, schedule_short, schedule_words, weekdays_words


@pytest.mark.parametrize(
    ("weekdays", "words"),
    [
        ("*", "every day"),
        ("0-6", "every day"),
        ("1-5", "Monday to Friday"),
        ("0,6", "Saturday and Sunday"),
        ("1,3,5", "Monday, Wednesday and Friday"),
        ("5,6,0,1", "Friday to Monday"),
        ("3", "Wednesday"),
        ("1-2,4-6", "Monday, Tuesday and Thursday to Saturday"),
    ],
)
def test_weekdays_read_as_people_say_them(weekdays, words):
    assert weekdays_words(weekdays) == words


def test_what_holds_on_the_other_days_follows_the_last_moment_of_a_listed_day():
    overnight = Schedule("1-5", time(20), time(8), "Europe/Rome")
    assert schedule_words(overnight) == (
        "Goes to sleep at 20:00 and wakes at 08:00, Monday to Friday (Europe/Rome time); "
        "asleep through the other days."
    )
    early = Schedule("0,6", time(1), time(7), "UTC")
    assert schedule_words(early).endswith(
        "Saturday and Sunday (UTC time); awake on the other days."
    )
    daily = Schedule("*", time(22), time(6), "UTC")
    assert (
        schedule_words(daily) == "Goes to sleep at 22:00 and wakes at 06:00, every day (UTC time)."
    )
    assert schedule_words(None) == "Never sleeps."
    assert schedule_short(overnight) == "20:00 to 08:00, Monday to Friday, Europe/Rome"
    assert schedule_short(None) == "never sleeps"


def test_a_moment_in_the_schedules_own_zone():
    moment = datetime(2026, 3, 18, 7, 0, tzinfo=UTC)
    assert in_zone(moment, "Europe/Rome") == "Wed 08:00"
    assert in_zone(moment, "Nowhere/Else") == "" and in_zone(None, "UTC") == ""
