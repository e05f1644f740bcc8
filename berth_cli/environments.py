"""`berth env`: ephemeral environments, one per pull request, created (or found again) on
every push and ended when it closes, by CI."""

from __future__ import annotations

import copy
import sys
import time
from typing import Any

import click

from berth_cli.context import Context, pass_context, tenant_option
from berth_cli.output import err
from berth_cli.progress import TIMED_OUT, wait_until_ready


@click.group()
def env() -> None:
    """Ephemeral environments: one per pull request, created and ended by CI."""


@env.command("create")
@tenant_option
@click.option("--project", required=True)
@click.option(
    "--slug", required=True, help="The environment's name, e.g. pr-42 (CI_ENVIRONMENT_SLUG)."
)
@click.option("--branch", default="", help="The branch it deploys.")
@click.option("--mr", "mr_id", default="", help="The pull/merge request's number.")
@click.option("--ttl", help="How long it lives, e.g. 4h (default: the tier's).")
@click.option("--tier", help="An ephemeral tier (default: the tenant's first).")
@click.option("--cluster")
@click.option(
    "--reuse",
    is_flag=True,
    help="If the project has this environment already (same branch), use it and restart its "
    "TTL instead of failing: what a pipeline runs on every push.",
)
@click.option("--wait", is_flag=True, help="Show progress until it is Ready; exit 0 only then.")
@click.option("--timeout", default=900.0, show_default=True, help="Seconds --wait waits.")
@click.option("--interval", default=2.0, show_default=True, help="Seconds between polls.")
@click.option(
    "--env-file",
    type=click.Path(dir_okay=False, writable=True),
    help="Write BERTH_NAMESPACE= and BERTH_ENVIRONMENT_URL= lines to this file (a GitLab "
    "dotenv report; a GitHub step adds them to $GITHUB_OUTPUT).",
)
@pass_context
def env_create(
    context: Context,
    tenant: str | None,
    slug: str,
    reuse: bool,
    wait: bool,
    timeout: float,
    interval: float,
    env_file: str | None,
    **fields: Any,
) -> None:
    """Create an ephemeral environment (or, with --reuse, find it again); print its
    namespace."""
    answer = context.berth.call(
        "create_environment",
        query={"reuse": "true" if reuse else None},
        body={**fields, "tenant": context.tenant(tenant), "env_slug": slug},
    )
    found = context.berth.last_status == 200
    err.print(
        f"Environment {answer['project']}/{answer['env_slug']} (#{answer['id']}"
        f"{', found again' if found else ''}): namespace {answer['namespace']} on "
        f"{answer['cluster']}, until {answer['expires_at']}",
        highlight=False,
    )
    if env_file:
        with open(env_file, "w", encoding="utf-8") as lines:
            lines.write(
                f"BERTH_NAMESPACE={answer['namespace']}\nBERTH_ENVIRONMENT_URL={answer['page']}\n"
            )
    code = wait_until_ready(context.berth, answer, timeout, interval) if wait else 0
    click.echo(answer["namespace"])
    sys.exit(code)


@env.command("end")
@tenant_option
@click.option("--project", required=True)
@click.option("--slug", required=True)
@click.option("--reason", default="", help="Kept in the audit log.")
@click.option("--wait", is_flag=True, help="Wait until it has ended (namespace and files gone).")
@click.option("--timeout", default=900.0, show_default=True, help="Seconds --wait waits.")
@click.option("--interval", default=2.0, show_default=True, help="Seconds between polls.")
@pass_context
def env_end(
    context: Context,
    tenant: str | None,
    project: str,
    slug: str,
    reason: str,
    wait: bool,
    timeout: float,
    interval: float,
) -> None:
    """End an ephemeral environment: its namespace and GitOps files go. Ending one already
    ending or ended changes nothing and exits 0, so a retried closing job is harmless."""
    done = context.berth.call(
        "stop_environment",
        body={
            "tenant": context.tenant(tenant),
            "project": project,
            "env_slug": slug,
            "reason": reason,
        },
    )
    click.echo(f"Environment {project}/{slug}: {done['state']}")
    if wait:
        sys.exit(wait_until_ended(context, done, timeout, interval))


def wait_until_ended(
    context: Context, environment: dict[str, Any], timeout: float, interval: float
) -> int:
    deadline = time.monotonic() + timeout
    while environment["state"] != "ended":
        if time.monotonic() >= deadline:
            err.print(f"Still {environment['state']} after {timeout:.0f} s.")
            return TIMED_OUT
        time.sleep(interval)  # polling the API at a fixed pace
        environment = context.berth.call("environment", path={"id": environment["id"]})
        if environment["state"] == "ended":
            click.echo(f"Environment {environment['project']}/{environment['env_slug']}: ended")
    return 0


# `env delete` was its first name: old pipelines keep working; help lists `end` only.
env_delete = copy.copy(env_end)
env_delete.hidden = True
env.add_command(env_delete, "delete")
