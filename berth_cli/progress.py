"""`berth env create --wait`: a progress bar per object (the request, then its namespace),
polled through the API until Ready, a refusal, or the timeout."""

from __future__ import annotations

import time
from typing import Any

from rich.progress import BarColumn, Progress, TextColumn

from berth_cli.client import Berth
from berth_cli.output import err

# How far along each object is: a request's states, then an environment's.
REQUEST_STEPS = ("submitted", "approved", "provisioning", "ready")
REQUEST_ENDS = {"rejected", "cancelled", "failed", "decommissioned"}
ENVIRONMENT_STEPS = ("starting", "live")
TIMED_OUT = 3


def step(states: tuple[str, ...], state: str) -> int:
    return states.index(state) + 1 if state in states else 0


def wait_until_ready(
    berth: Berth, environment: dict[str, Any], timeout: float, interval: float
) -> int:
    """Progress per object (the request, the namespace) until Ready; the exit code."""
    deadline = time.monotonic() + timeout
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.fields[state]}"),
        console=err,
        transient=False,
    ) as progress:
        request_bar = progress.add_task(
            f"request #{environment['request']}", total=len(REQUEST_STEPS), state=""
        )
        namespace_bar = progress.add_task(
            f"namespace {environment['namespace']}", total=len(ENVIRONMENT_STEPS), state=""
        )
        while True:
            request_state = environment.get("request_state", "")
            progress.update(
                request_bar, completed=step(REQUEST_STEPS, request_state), state=request_state
            )
            progress.update(
                namespace_bar,
                completed=step(ENVIRONMENT_STEPS, environment["state"]),
                state=environment["state"],
            )
            if request_state == "ready" and environment["state"] == "live":
                return 0
            if request_state in REQUEST_ENDS or environment["state"] in ("ending", "ended"):
                seen = berth.call("request", path={"id": environment["request"]})
                err.print(
                    f"Request #{environment['request']} is {request_state}: "
                    f"{seen.get('status_message') or 'no reason given'}"
                )
                return 1
            if time.monotonic() >= deadline:
                err.print(
                    f"Not Ready after {timeout:.0f} s (request {request_state}, "
                    f"environment {environment['state']})."
                )
                return TIMED_OUT
            time.sleep(interval)  # polling the API at a fixed pace
            environment = berth.call("environment", path={"id": environment["id"]})
