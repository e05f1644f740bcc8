"""Which requests a worker provisions together: those that only create, by cluster; and
one request of a batch as far as the worker got with it."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from provisioning.inputs.kinds import plan_kinds_where
from provisioning.plan import Plan, PlanInput
from tenants.models import Request, Run

# Requests that only create: a worker taking one of them approved takes others approved for
# the same cluster with it. Removals and the rest go one at a time.
BATCHED_KINDS = plan_kinds_where(batched=True)


@dataclass
class Item:
    """One request of a batch, as far as the worker got with it."""

    request: Request
    run: Run
    inputs: PlanInput
    plan: Plan

    @property
    def pk(self) -> int:
        return self.request.pk

    @property
    def git_index(self) -> int:
        """Removing things, the repository goes first (see steps_of); else last."""
        return 0 if self.plan.delete else len(self.run.steps) - 1

    @property
    def offset(self) -> int:
        """Where the plan's apply steps start in the run."""
        return 1 if self.plan.delete else 0


def batches_of(request_ids: list[int]) -> list[list[int]]:
    """The requests one transition made ready for a worker, as the jobs to queue: those that
    only create, by cluster, up to BERTH_PROVISION_BATCH_MAX a job (the first id leads);
    the rest one a job."""
    size = max(settings.BERTH_PROVISION_BATCH_MAX, 1)
    together: dict[str, list[int]] = {}
    alone = []
    for request_id, kind, payload in (
        Request.objects.filter(pk__in=request_ids)
        .order_by("pk")
        .values_list("pk", "kind", "payload")
    ):
        cluster = payload.get("cluster") if isinstance(payload, dict) else None
        if kind in BATCHED_KINDS and cluster:
            together.setdefault(cluster, []).append(request_id)
        else:
            alone.append([request_id])
    return [
        ids[start : start + size] for ids in together.values() for start in range(0, len(ids), size)
    ] + alone
