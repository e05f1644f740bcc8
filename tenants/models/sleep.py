"""A sleep schedule's fields, shared by tiers (the default) and namespaces (an override)."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import models

from tenants.sleep_schedules import Schedule


class SleepScheduleFields(models.Model):
    sleep_weekdays = models.CharField(
        max_length=40,
        blank=True,
        help_text='Days it sleeps and wakes, as kube-green writes them: "1-5" (Monday to '
        'Friday), "*", "0,6" (0 is Sunday). Blank: it never sleeps.',
    )
    sleep_at = models.TimeField(null=True, blank=True, help_text="e.g. 20:00")
    wake_at = models.TimeField(null=True, blank=True, help_text="e.g. 08:00")
    sleep_time_zone = models.CharField(max_length=60, default="UTC")

    class Meta:
        abstract = True

    def own_schedule(self) -> Schedule | None:
        if not self.sleep_weekdays or self.sleep_at is None or self.wake_at is None:
            return None
        return Schedule(self.sleep_weekdays, self.sleep_at, self.wake_at, self.sleep_time_zone)

    def clean_schedule(self) -> None:
        times = (self.sleep_at is not None, self.wake_at is not None)
        if not self.sleep_weekdays:
            if any(times):
                raise ValidationError({"sleep_weekdays": "Say the days it sleeps, or no times."})
            return
        if not all(times):
            raise ValidationError({"sleep_at": "A schedule needs both its sleep and wake times."})
        schedule = self.own_schedule()
        assert schedule is not None
        if problems := schedule.problems():
            raise ValidationError(problems)
