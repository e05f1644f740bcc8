"""A namespace's sleep, on its page: "Wake now" (for how many hours, within its tier's
longest wake) and the form that asks for another schedule (its tier's, its own, or none).
The services decide: tenants.services.sleep.wake_namespace and request_sleep_schedule,
whose field errors land on these fields."""

from __future__ import annotations

from typing import Any

from django import forms

from tenants.choices import SleepMode
from tenants.forms.base import Form
from tenants.models import Namespace

# The hour fields of a schedule, as the payload takes them.
HHMM = "%H:%M"


class WakeForm(Form):
    # Bounds are the service's (its words say the tier's range); the browser hints at them.
    hours = forms.IntegerField(
        required=False,
        label="Awake for",
        help_text="Empty: as long as its tier lets a wake last.",
    )

    def __init__(self, *args: Any, namespace: Namespace, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        longest = namespace.tier.wake_max_hours
        self.fields["hours"].widget.attrs.update(
            {"min": 1, "max": longest, "placeholder": str(longest), "class": "input-hours"}
        )
        self.fields["hours"].help_text = (
            f"1 to {longest} (empty: {longest}), never past its next sleep"
            + (
                ": kube-green keeps it awake until then."
                if namespace.cluster.has_kube_green
                else "."
            )
        )


class SleepScheduleForm(Form):
    mode = forms.ChoiceField(
        choices=SleepMode.choices,
        label="Sleeps",
        widget=forms.RadioSelect,
    )
    sleep_weekdays = forms.CharField(
        max_length=40,
        required=False,
        label="On the days",
        help_text='As kube-green writes them: "1-5" Monday to Friday, "*" every day, "0,6" '
        "(0 is Sunday).",
    )
    sleep_at = forms.TimeField(
        required=False, label="Goes to sleep at", input_formats=[HHMM], widget=forms.TimeInput
    )
    wake_at = forms.TimeField(
        required=False, label="Wakes at", input_formats=[HHMM], widget=forms.TimeInput
    )
    sleep_time_zone = forms.CharField(
        max_length=60, required=False, label="Time zone", help_text='e.g. "Europe/Rome", "UTC".'
    )

    def __init__(self, *args: Any, namespace: Namespace, **kwargs: Any) -> None:
        own = namespace.sleep_mode == SleepMode.CUSTOM
        # What it has now; a namespace following its tier starts from the tier's times.
        source = namespace if own else namespace.tier
        kwargs.setdefault(
            "initial",
            {
                "mode": namespace.sleep_mode,
                "sleep_weekdays": source.sleep_weekdays,
                "sleep_at": source.sleep_at,
                "wake_at": source.wake_at,
                "sleep_time_zone": source.sleep_time_zone or "UTC",
            },
        )
        super().__init__(*args, **kwargs)
        for name in ("sleep_at", "wake_at"):
            self.fields[name].widget.format = HHMM
            self.fields[name].widget.attrs.update({"type": "time", "class": "input-time"})
        self.fields["sleep_weekdays"].widget.attrs["placeholder"] = "1-5"
        self.fields["sleep_time_zone"].widget.attrs["placeholder"] = "UTC"

    def schedule(self) -> dict[str, Any]:
        """What request_sleep_schedule takes: the mode, and for a schedule of its own its
        days, hours and time zone."""
        data = self.cleaned_data
        if data["mode"] != SleepMode.CUSTOM:
            return {"mode": data["mode"]}
        return {
            "mode": data["mode"],
            "sleep_weekdays": data["sleep_weekdays"].strip(),
            "sleep_at": data["sleep_at"].strftime(HHMM) if data["sleep_at"] else None,
            "wake_at": data["wake_at"].strftime(HHMM) if data["wake_at"] else None,
            "sleep_time_zone": data["sleep_time_zone"].strip() or "UTC",
        }
