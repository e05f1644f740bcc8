"""What a request for access asks: a role the namespace's tier offers, for a while, and why."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from tenants import quantities
from tenants.payloads.base import TenantScoped


class AccessPayload(TenantScoped):
    namespace = serializers.CharField(max_length=63)
    role = serializers.CharField(max_length=40)
    # 15m, 1h, 1h30m or seconds: kept as whole minutes.
    duration = serializers.CharField(max_length=20)
    reason = serializers.CharField(max_length=500, allow_blank=True)  # said below, in words

    def validate_duration(self, value: str) -> int:
        try:
            seconds = quantities.duration_to_seconds(value)
        except quantities.QuantityError as exc:
            raise serializers.ValidationError(str(exc)) from exc
        if seconds % 60:
            raise serializers.ValidationError("Ask for whole minutes (e.g. 45m, 1h, 2h30m).")
        return seconds // 60

    def validate_reason(self, value: str) -> str:
        if len(value.strip()) < 3:
            raise serializers.ValidationError(
                "Say why you need it: the approvers read it, and the audit log keeps it."
            )
        return value.strip()

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        namespace = self._live_namespace(data["namespace"])
        tier = namespace.tier
        offered = tier.access_roles()
        if data["role"] not in offered:
            raise serializers.ValidationError(
                {"role": f"The {tier.slug} tier offers {', '.join(offered)}: not {data['role']!r}."}
            )
        minutes = data.pop("duration")
        shortest, longest = tier.access_min_minutes, tier.access_max_minutes
        if not shortest <= minutes <= longest:
            raise serializers.ValidationError(
                {
                    "duration": f"Access to {tier.slug} namespaces lasts from "
                    f"{quantities.seconds_to_duration(shortest * 60)} to "
                    f"{quantities.seconds_to_duration(longest * 60)}."
                }
            )
        data["minutes"] = minutes
        data["cluster"] = namespace.cluster.name
        return data
