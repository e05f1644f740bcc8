"""The GitOps step of a run: its row in the run's steps, the writes of a batch's requests
(commits.write_gitops_all), and each outcome noted in its run or said as a failure."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from provisioning import gitops
from provisioning.plan import PlanInput
from provisioning.reconcile.commits import GitOpsWritten, write_gitops_all
from provisioning.records import run_steps
from provisioning.signals import git_push_failed
from tenants.models import Request, Run

logger = logging.getLogger(__name__)

GITOPS_DONE = ("committed", "unchanged", "skipped")


def gitops_step_row(repo_url: str) -> dict[str, Any]:
    """The run's last step: one commit to the tenant's repository (or why there is none)."""
    where = gitops.display_url(repo_url) or "(no repository)"
    return {
        "object": f"GitOps commit {where}",
        "kind": "GitOps",
        "namespace": "",
        "name": where,
        "action": "commit",
        "outcome": "pending",
        "attempts": 0,
        "message": "",
    }


@dataclass(frozen=True)
class GitFailure:
    """Why the GitOps step failed: `error` for the request, `message` git's own (redacted);
    `transient` when the remote did not answer (the request waits, it does not fail)."""

    error: str
    message: str
    transient: bool


def gitops_step(
    *, tenancy_request: Request, run: Run, inputs: PlanInput, index: int
) -> GitFailure | None:
    """Run the GitOps step (row `index` of the run) unless an earlier attempt finished it;
    None, or why it failed. Its outcome is noted in the run; the caller writes it."""
    return gitops_steps([(tenancy_request, run, inputs, index)])[tenancy_request.pk]


def gitops_steps(steps: list[tuple[Request, Run, PlanInput, int]]) -> dict[int, GitFailure | None]:
    """The GitOps step of several requests' runs (request, run, inputs, row), by request id:
    None, or why it failed. Written together (`write_gitops_all`); each outcome is noted in
    its run, which the caller writes."""
    todo = [
        (r, inputs)
        for r, run, inputs, index in steps
        if run.steps[index]["outcome"] not in GITOPS_DONE
    ]
    written = write_gitops_all(
        requests=[r for r, _ in todo], inputs={r.pk: inputs for r, inputs in todo}
    )
    failures: dict[int, GitFailure | None] = {}
    for tenancy_request, run, _, index in steps:
        outcome = written.get(tenancy_request.pk)
        failures[tenancy_request.pk] = None
        if isinstance(outcome, GitOpsWritten):
            run_steps.note_step(
                run=run,
                index=index,
                outcome=outcome.outcome,
                attempts=outcome.attempts,
                message=outcome.message,
            )
        elif outcome is not None:
            failures[tenancy_request.pk] = git_failure(tenancy_request, run, index, outcome)
    return failures


def git_failure(tenancy_request: Request, run: Run, index: int, error: Exception) -> GitFailure:
    attempts = getattr(error, "attempts", 1)
    message = getattr(error, "message", str(error))
    git_push_failed.send(sender=Request, request_id=tenancy_request.pk)
    if getattr(error, "transient", False):
        # Left pending: the next try starts with it. git's words name the server's
        # address: the log has them, people read what happened.
        logger.warning("request %s: repository unreachable: %s", tenancy_request.pk, message)
        said = "its server did not answer (the connection failed or timed out)"
        return GitFailure(error=said, message=said, transient=True)
    run_steps.note_step(run=run, index=index, outcome="failed", attempts=attempts, message=message)
    failure = f"{run.steps[index]['object']}: {message}"
    logger.warning("request %s failed: %s", tenancy_request.pk, failure)
    return GitFailure(error=failure, message=message, transient=False)
