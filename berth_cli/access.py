"""`berth access`: ask for one of a tier's roles on a namespace (your tenant's or another's)
for a while, wait for the decision, list the grants you can see, end one early."""

from __future__ import annotations

import sys
import time
from typing import Any

import click

from berth_cli.client import Berth
from berth_cli.context import Context, pass_context
from berth_cli.output import err, show

STATES = ("pending", "granting", "active", "expired", "revoked", "refused", "failed")
# Where --wait stops: active is the one that exits 0.
ENDS = ("active", "refused", "failed", "expired", "revoked")
COLUMNS = ("id", "namespace", "role", "person", "state", "until", "reason")
TIMED_OUT = 3


@click.group()
def access() -> None:
    """Access on request: a role on one namespace for a while, decided by its tenant."""


@access.command("request")
@click.argument("namespace")
@click.argument("role")
@click.option("--for", "duration", required=True, help="How long, once approved: 15m, 1h, 1h30m.")
@click.option("--reason", required=True, help="Why: the approvers read it, the audit log keeps it.")
@click.option("--cluster", help="When the namespace's name is live on several clusters.")
@click.option("--wait", is_flag=True, help="Wait until it is active (exit 0) or refused, etc.")
@click.option("--timeout", default=900.0, show_default=True, help="Seconds --wait waits.")
@click.option("--interval", default=2.0, show_default=True, help="Seconds between polls.")
@pass_context
def access_request(
    context: Context,
    namespace: str,
    role: str,
    duration: str,
    reason: str,
    cluster: str | None,
    wait: bool,
    timeout: float,
    interval: float,
) -> None:
    """Ask for ROLE (one the namespace's tier offers) on NAMESPACE."""
    berth = context.berth
    grant = berth.call(
        "request_access",
        body={
            "namespace": namespace,
            "role": role,
            "duration": duration,
            "reason": reason,
            "cluster": cluster,
        },
    )
    click.echo(
        f"Access grant #{grant['id']}: {grant['role']} on {grant['namespace']} for "
        f"{grant['duration']}: {grant['state']}\n"
        f"Request #{grant['request']}: {berth.url}/requests/{grant['request']}/"
    )
    if not wait:
        return
    grant = wait_for(berth, grant, timeout, interval)
    if grant is None:
        sys.exit(TIMED_OUT)
    if grant["state"] != "active":
        seen = berth.call("request", path={"id": grant["request"]})
        err.print(
            f"Access grant #{grant['id']} is {grant['state']}: "
            f"{seen.get('status_message') or 'no reason given'}",
            highlight=False,
        )
        sys.exit(1)
    click.echo(
        f"Active until {grant['expires_at']}. Use it:\n"
        f"  berth kubeconfig {grant['namespace']} --credentials berth"
    )


def wait_for(
    berth: Berth, grant: dict[str, Any], timeout: float, interval: float
) -> dict[str, Any] | None:
    """Poll the grant until one of ENDS, saying each change of state; None on the timeout."""
    deadline = time.monotonic() + timeout
    state = grant["state"]
    while grant["state"] not in ENDS:
        if time.monotonic() >= deadline:
            err.print(f"Still {grant['state']} after {timeout:.0f} s.")
            return None
        time.sleep(interval)  # polling the API at a fixed pace
        grant = berth.call("access_grant", path={"id": grant["id"]})
        if grant["state"] != state:
            err.print(f"Access grant #{grant['id']}: {state} → {grant['state']}")
            state = grant["state"]
    return grant


@access.command("list")
@click.option("--state", type=click.Choice(STATES), help="Only grants in this state.")
@click.option("--namespace", help="Only grants on this namespace.")
@click.option("--mine", is_flag=True, help="Only your own grants.")
@click.option(
    "-o",
    "--output",
    type=click.Choice(["table", "json", "yaml"]),
    default="table",
    show_default=True,
)
@pass_context
def access_list(
    context: Context, state: str | None, namespace: str | None, mine: bool, output: str
) -> None:
    """Grants you can see: yours, and those on your tenants' namespaces; newest first."""
    rows = context.berth.every(
        "access_grants", state=state, namespace=namespace, mine="true" if mine else None
    )
    if output == "table":
        rows = [{**row, "until": row.get("expires_at")} for row in rows]
    show(rows, output, COLUMNS)


@access.command("revoke")
@click.argument("grant_id", type=int)
@pass_context
def access_revoke(context: Context, grant_id: int) -> None:
    """End a grant before its time (yours, or as an owner of its tenant or a platform admin)."""
    grant = context.berth.call("revoke_access", path={"id": grant_id})
    click.echo(
        f"Access grant #{grant['id']}: {grant['state']} ({grant['role']} on "
        f"{grant['namespace']} for {grant['person']})"
    )
