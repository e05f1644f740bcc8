"""A namespace's sleep schedule, changed: its tier's, its own, or none. Adds nothing to the
budget. Owners may set what their tier lets them without anyone else (the default rules);
anything beyond is a platform admin's call."""

from __future__ import annotations

from typing import Any

from tenants.choices import NamespaceState, RequestKind, SleepChoice, SleepMode
from tenants.kinds.base import Kind, Target
from tenants.models import Namespace
from tenants.payloads.sleep import SleepPayload


class SleepKind(Kind):
    value = RequestKind.SLEEP
    payload = SleepPayload
    target = Target.NAMESPACE
    sets_sleep_schedule = True
    form_note = (
        "Owners may set what the namespace's tier allows them without anyone else; the rest "
        "goes to a platform admin. Once approved, Berth applies it at once."
    )

    def rule_attributes(self, payload: dict[str, Any]) -> dict[str, Any]:
        namespace = (
            Namespace.objects.select_related("tier")
            .filter(
                name=payload["namespace"],
                cluster__name=payload["cluster"],
                state=NamespaceState.ACTIVE,
            )
            .first()
        )
        allowed = namespace is not None and within_tier(namespace, payload["mode"])
        return {"sleep_mode": payload["mode"], "sleep_within_tier": allowed}


def within_tier(namespace: Namespace, mode: str) -> bool:
    """Whether a schedule of this mode is one the namespace's owners may set themselves."""
    choice = namespace.tier.sleep_owner_choice
    if choice == SleepChoice.ANYTHING:
        return True
    if choice == SleepChoice.TIMES:
        return mode != SleepMode.NEVER
    return mode == SleepMode.TIER


KIND = SleepKind()
