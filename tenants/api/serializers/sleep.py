"""A namespace's sleep over the API: as a namespace shows it (its `sleep` object), what
waking it asks, and what the answer says."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from tenants.choices import SleepMode
from tenants.models import Namespace
from tenants.selectors.sleep import sleep_status

# Who puts a namespace to sleep and wakes it on its cluster.
KUBE_GREEN = "kube-green"
BERTH = "berth"


class SleepScheduleSerializer(serializers.Serializer):
    weekdays = serializers.CharField(
        help_text='As kube-green writes them: "1-5" Monday to Friday, "*", "0,6" (0 is Sunday).'
    )
    sleep_at = serializers.CharField(help_text="HH:MM in its time zone.")
    wake_at = serializers.CharField(help_text="HH:MM in its time zone.")
    time_zone = serializers.CharField(help_text='An IANA time zone, e.g. "Europe/Rome".')


class SleepSerializer(serializers.Serializer):
    mode = serializers.ChoiceField(
        choices=SleepMode.choices,
        help_text="tier: its tier's schedule; custom: its own; never: it never sleeps.",
    )
    schedule = SleepScheduleSerializer(
        allow_null=True,
        help_text="The schedule that holds for it now; null: none (it never sleeps, or sleeps "
        "when idle).",
    )
    asleep = serializers.BooleanField(help_text="Whether its cluster holds it asleep now.")
    awake_until = serializers.DateTimeField(
        allow_null=True, help_text="A wake on demand in force, until then."
    )
    next_change = serializers.DateTimeField(
        allow_null=True,
        help_text="When it next goes to sleep or wakes (its schedule, or a wake's end).",
    )
    idle_hours = serializers.IntegerField(
        allow_null=True,
        help_text="Instead of a schedule (its tier's idle sleep): it sleeps once this many "
        "hours pass without a deploy, and wakes at the next; null otherwise.",
    )
    by = serializers.ChoiceField(
        choices=[KUBE_GREEN, BERTH],
        allow_null=True,
        help_text="Who puts it to sleep and wakes it: kube-green on its cluster, or Berth "
        "(workloads scaled to zero and back); null when it never sleeps.",
    )


def sleep_of(namespace: Namespace) -> dict[str, Any]:
    """The `sleep` object of a namespace (its tier and cluster selected with it), as
    SleepSerializer says it (every moment in UTC, as the API's others)."""
    status = sleep_status(namespace)
    schedule = status.schedule
    shown = {
        "mode": namespace.sleep_mode,
        "schedule": {
            "weekdays": schedule.weekdays,
            "sleep_at": schedule.hhmm(schedule.sleep_at),
            "wake_at": schedule.hhmm(schedule.wake_at),
            "time_zone": schedule.time_zone,
        }
        if schedule
        else None,
        "asleep": status.asleep,
        "awake_until": status.awake_until,
        "next_change": status.next_change,
        "idle_hours": status.idle_hours,
        "by": (KUBE_GREEN if status.by_kube_green else BERTH) if status.sleeps else None,
    }
    return SleepSerializer(shown).data


class WakeSerializer(serializers.Serializer):
    hours = serializers.IntegerField(
        required=False,
        allow_null=True,
        help_text="How long it stays awake: 1 to its tier's longest wake (the tiers' "
        "`wake_max_hours`); left out, that longest. Never past its schedule's next sleep.",
    )
    cluster = serializers.CharField(
        required=False,
        max_length=63,
        help_text="The cluster, when a namespace of this name is live on more than one.",
    )


class WokenSerializer(serializers.Serializer):
    id = serializers.IntegerField(help_text="The namespace's id (GET /api/v1/namespaces/{id}/).")
    namespace = serializers.CharField(help_text="Its name.")
    cluster = serializers.CharField()
    awake_until = serializers.DateTimeField(help_text="It stays awake until then.")
    asleep = serializers.BooleanField(
        help_text="Whether its cluster still holds it asleep: true until Berth (or "
        "kube-green) has brought its workloads back, usually within a minute."
    )
