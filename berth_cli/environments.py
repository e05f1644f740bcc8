"""`berth env`: ephemeral environments, one per pull request, created and removed by CI."""

from __future__ import annotations

import sys
from typing import Any

import click

from berth_cli.context import Context, pass_context, tenant_option
from berth_cli.output import err
from berth_cli.progress import wait_until_ready


@click.group()
def env() -> None:
    """Ephemeral environments: one per pull request, created and removed by CI."""


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
@click.option("--wait", is_flag=True, help="Show progress until it is Ready; exit 0 only then.")
@click.option("--timeout", default=900.0, show_default=True, help="Seconds --wait waits.")
@click.option("--interval", default=2.0, show_default=True, help="Seconds between polls.")
@pass_context
def env_create(
    context: Context,
    tenant: str | None,
    slug: str,
    wait: bool,
    timeout: float,
    interval: float,
    **fields: Any,
) -> None:
    """Create an ephemeral environment; its namespace is named at once."""
    created = context.berth.call(
        "create_environment", body={**fields, "tenant": context.tenant(tenant), "env_slug": slug}
    )
    err.print(
        f"Environment {created['project']}/{created['env_slug']} (#{created['id']}): "
        f"namespace {created['namespace']} on {created['cluster']}",
        highlight=False,
    )
    code = wait_until_ready(context.berth, created, timeout, interval) if wait else 0
    click.echo(created["namespace"])
    sys.exit(code)


@env.command("delete")
@tenant_option
@click.option("--project", required=True)
@click.option("--slug", required=True)
@click.option("--reason", default="", help="Kept in the audit log.")
@pass_context
def env_delete(context: Context, tenant: str | None, project: str, slug: str, reason: str) -> None:
    """End an ephemeral environment: its namespace and GitOps files go."""
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
