"""A run's steps: one row per object applied or deleted and one for the GitOps commit,
laid out pending, then each outcome noted in memory and written with the others."""

from __future__ import annotations

from typing import Any

from provisioning.plan import ObjectRef
from tenants.bulk import update_each
from tenants.models import (
    Run,
)


def step_row(ref: ObjectRef, action: str) -> dict[str, Any]:
    return {
        "object": str(ref),
        "kind": ref.kind,
        "namespace": ref.namespace,
        "name": ref.name,
        "action": action,
        "outcome": "pending",
        "attempts": 0,
        "message": "",
    }


def start_steps(*, run: Run, steps: list[dict[str, Any]]) -> None:
    """Lay out every step as pending, keeping outcomes a previous attempt already reached."""
    done = {
        step["object"] + step["action"]: step
        for step in run.steps
        if step["outcome"] not in ("pending", "failed")
    }
    run.steps = [done.get(step["object"] + step["action"], step) for step in steps]
    run.attempts += 1
    run.save(update_fields=["steps", "attempts"])


def record_step(*, run: Run, index: int, outcome: str, attempts: int, message: str = "") -> None:
    note_step(run=run, index=index, outcome=outcome, attempts=attempts, message=message)
    write_steps(runs=[run])


def note_step(*, run: Run, index: int, outcome: str, attempts: int, message: str = "") -> None:
    """A step's outcome in the run as held in memory; `write_steps` writes it."""
    step = run.steps[index]
    step.update(outcome=outcome, attempts=step["attempts"] + attempts, message=message)


def write_steps(*, runs: list[Run]) -> None:
    """The steps of these runs as held in memory, in one statement."""
    update_each(Run, {run.pk: {"steps": run.steps} for run in runs})
