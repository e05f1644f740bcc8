"""`berth wake`: wake a namespace that sleeps on a schedule (or keep it awake past its next
sleep) for some hours, and with --wait, wait until its workloads are back."""

from __future__ import annotations

import sys
import time
from typing import Any

import click

from berth_cli.client import Berth
from berth_cli.context import Context, pass_context
from berth_cli.output import err

TIMED_OUT = 3


@click.command()
@click.argument("namespace")
@click.option(
    "--hours",
    type=int,
    help="How long it stays awake: 1 to its tier's longest wake (default: that longest). "
    "Never past its schedule's next sleep.",
)
@click.option("--cluster", help="When the namespace's name is live on several clusters.")
@click.option("--wait", is_flag=True, help="Wait until its cluster holds it awake (exit 0).")
@click.option("--timeout", default=300.0, show_default=True, help="Seconds --wait waits.")
@click.option("--interval", default=2.0, show_default=True, help="Seconds between polls.")
@pass_context
def wake(
    context: Context,
    namespace: str,
    hours: int | None,
    cluster: str | None,
    wait: bool,
    timeout: float,
    interval: float,
) -> None:
    """Wake NAMESPACE (its name or id) now, as its tenant's owners and members may."""
    berth = context.berth
    woken = berth.call(
        "wake", path={"namespace": namespace}, body={"hours": hours, "cluster": cluster}
    )
    click.echo(
        f"{woken['namespace']} on {woken['cluster']}: awake until {woken['awake_until']}"
        + (" (its workloads are coming back)" if woken["asleep"] else "")
    )
    if not wait or not woken["asleep"]:
        return
    if not wait_until_awake(berth, woken, timeout, interval):
        sys.exit(TIMED_OUT)
    click.echo(f"{woken['namespace']} is awake: its workloads are back.")


def wait_until_awake(berth: Berth, woken: dict[str, Any], timeout: float, interval: float) -> bool:
    """Poll the namespace until its cluster holds it awake; False on the timeout."""
    err.print(f"Waiting for {woken['namespace']}'s workloads to come back…", highlight=False)
    deadline = time.monotonic() + timeout
    while True:
        if time.monotonic() >= deadline:
            err.print(
                f"{woken['namespace']} is still asleep after {timeout:.0f} s: Berth keeps "
                "waking it; its page says what its last reconcile met.",
                highlight=False,
            )
            return False
        time.sleep(interval)  # polling the API at a fixed pace
        seen = berth.call("namespace", path={"id": woken["id"]})
        if not seen["sleep"]["asleep"]:
            return True
