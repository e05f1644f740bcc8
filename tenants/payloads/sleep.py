"""What a request for a sleep schedule asks: its namespace follows its tier's schedule, has
its own, or never sleeps."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as ModelValidationError
from rest_framework import serializers

from tenants.choices import SleepMode
from tenants.models import Namespace
from tenants.payloads.base import TenantScoped


class SleepPayload(TenantScoped):
    namespace = serializers.CharField(max_length=63)
    mode = serializers.ChoiceField(choices=SleepMode.choices)
    sleep_weekdays = serializers.CharField(max_length=40, required=False, allow_blank=True)
    sleep_at = serializers.TimeField(required=False, allow_null=True, format="%H:%M")
    wake_at = serializers.TimeField(required=False, allow_null=True, format="%H:%M")
    sleep_time_zone = serializers.CharField(max_length=60, required=False, default="UTC")

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        namespace = self._live_namespace(data["namespace"])
        if data["mode"] == SleepMode.CUSTOM:
            probe = Namespace(
                sleep_weekdays=data.get("sleep_weekdays", ""),
                sleep_at=data.get("sleep_at"),
                wake_at=data.get("wake_at"),
                sleep_time_zone=data.get("sleep_time_zone", "UTC"),
            )
            if not probe.sleep_weekdays:
                raise serializers.ValidationError(
                    {"sleep_weekdays": "A schedule of its own needs its days, e.g. 1-5."}
                )
            try:
                probe.clean_schedule()
            except ModelValidationError as exc:
                raise serializers.ValidationError(exc.message_dict) from exc
        elif data["mode"] == SleepMode.TIER and not (
            namespace.tier.own_schedule() or namespace.tier.sleep_after_idle_hours
        ):
            raise serializers.ValidationError(
                {"mode": f"The {namespace.tier.slug} tier has no sleep schedule to follow."}
            )
        schedule = {
            "sleep_weekdays": data.get("sleep_weekdays", ""),
            "sleep_at": _hhmm(data.get("sleep_at")),
            "wake_at": _hhmm(data.get("wake_at")),
            "sleep_time_zone": data.get("sleep_time_zone") or "UTC",
        }
        if data["mode"] != SleepMode.CUSTOM:
            schedule = {
                "sleep_weekdays": "",
                "sleep_at": "",
                "wake_at": "",
                "sleep_time_zone": "UTC",
            }
        return {
            "namespace": namespace.name,
            "mode": data["mode"],
            **schedule,
            "cluster": namespace.cluster.name,
        }


def _hhmm(moment: Any) -> str:
    return moment.strftime("%H:%M") if moment else ""
