"""A namespace's new sleep schedule: its objects as they are, with the SleepInfo the new
schedule makes where kube-green carries it out (nothing in the repository: the schedule is
Berth's to carry out, not the team's files). Once Ready, the schedule is recorded and the
namespace's sleep settled by its key."""

from __future__ import annotations

import copy
from dataclasses import replace
from datetime import time

from provisioning.inputs.kinds.base import Draft, PlanKind
from provisioning.inputs.sleep import sleep_spec
from provisioning.inputs.specs import live_namespace, namespace_spec
from provisioning.plan import PlanInput
from tenants.choices import RequestKind
from tenants.models import Namespace, Request


def with_schedule(namespace: Namespace, payload: dict) -> Namespace:
    """The namespace as it will be once the request's schedule is recorded."""
    changed = copy.copy(namespace)
    changed.sleep_mode = payload["mode"]
    changed.sleep_weekdays = payload.get("sleep_weekdays", "")
    changed.sleep_at = time.fromisoformat(payload["sleep_at"]) if payload.get("sleep_at") else None
    changed.wake_at = time.fromisoformat(payload["wake_at"]) if payload.get("wake_at") else None
    changed.sleep_time_zone = payload.get("sleep_time_zone") or "UTC"
    return changed


class SleepPlan(PlanKind):
    value = RequestKind.SLEEP
    writes_repository = False

    def draft(self, tenancy_request: Request) -> Draft:
        tenant, payload = tenancy_request.tenant, tenancy_request.payload
        current = live_namespace(tenant, payload["namespace"])
        changed = with_schedule(current, payload)
        spec = namespace_spec(current)
        return Draft(
            cluster=current.cluster,
            engine=tenant.gitops_engine,
            namespaces=[replace(spec, sleep=sleep_spec(changed))],
        )

    def gitops_apps(self, tenancy_request: Request, inputs: PlanInput) -> list[str]:
        return []


KIND = SleepPlan()
