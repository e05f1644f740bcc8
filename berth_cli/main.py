"""The `berth` command: request, approve, watch and use Berth's namespaces and ephemeral
environments from a terminal or a CI job, ask for access to a namespace for a while, and
wake a namespace that sleeps on a schedule.

Exit codes: 0 done (with --wait: Ready), 1 the API refused or the work failed (its
problem detail is printed), 2 a usage or configuration error, 3 --wait ran out of time.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click
import httpx
from click.shell_completion import get_completion_class

from berth_cli import oidc
from berth_cli.access import access
from berth_cli.client import ApiProblem, Berth, NotConfigured, read_config, write_config
from berth_cli.context import Context, pass_context, tenant_option
from berth_cli.environments import env
from berth_cli.files import write_private
from berth_cli.output import err, show
from berth_cli.sleep import wake

FORMATS = click.Choice(["table", "json", "yaml"])
COLUMNS = {
    "requests": ("id", "tenant", "kind", "state", "requester", "created_at"),
    "namespaces": ("id", "name", "tenant", "tier", "cluster", "state"),
    "environments": ("id", "tenant", "project", "env_slug", "namespace", "state", "expires_at"),
}


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--url",
    envvar="BERTH_URL",
    help="Berth's address (BERTH_URL; else the config file's; else http://127.0.0.1:8000).",
)
@click.version_option(package_name="berth", prog_name="berth")
@click.pass_context
def cli(ctx: click.Context, url: str | None) -> None:
    """Berth from a terminal: request namespaces, projects and environments, approve them,
    wait for them, and get a kubeconfig to use them.

    Authenticates with a Berth API token: BERTH_TOKEN, or `berth login`, which keeps it in
    ~/.config/berth/config.toml."""
    ctx.obj = Context(url)


@cli.command()
@click.option("--token", help="An API token (default: BERTH_TOKEN, else asked for).")
@pass_context
def login(context: Context, token: str | None) -> None:
    """Check an API token against Berth and keep it, with the URL, in the config file."""
    import os

    token = token or os.environ.get("BERTH_TOKEN") or click.prompt("API token", hide_input=True)
    berth = Berth.from_settings(url=context.url, token=token)
    me = berth.call("me")
    path = write_config({**read_config(), "url": berth.url, "token": token})
    click.echo(
        f"Signed in to {berth.url} as {me['username']} (scopes: "
        f"{', '.join(me.get('scopes') or ['all'])}); saved in {path}."
    )


# --- requests --------------------------------------------------------------------------------


@cli.group()
def request() -> None:
    """Ask for a namespace, a project or an environment (the approval rules decide)."""


def submit(context: Context, tenant: str | None, kind: str, payload: dict[str, Any]) -> None:
    payload = {k: v for k, v in payload.items() if v not in (None, "")}
    created = context.berth.call(
        "submit", body={"tenant": context.tenant(tenant), "kind": kind, "payload": payload}
    )
    click.echo(
        f"Request #{created['id']} ({kind}): {created['state']}"
        + (f" — {created['status_message']}" if created.get("status_message") else "")
    )


@request.command("namespace")
@tenant_option
@click.option("--app", required=True, help="The application's name: <tenant>-<app>-<tier>.")
@click.option("--tier", required=True, help="e.g. dev, staging, prod.")
@click.option("--cluster", required=True)
@click.option("--cpu", required=True, help="CPU quota, e.g. 500m or 2.")
@click.option("--memory", required=True, help="Memory quota, e.g. 512Mi or 2Gi.")
@click.option("--storage", help="Storage quota, e.g. 10Gi.")
@pass_context
def request_namespace(context: Context, tenant: str | None, **payload: Any) -> None:
    """Request a namespace."""
    submit(context, tenant, "namespace", payload)


@request.command("project")
@tenant_option
@click.option("--app", required=True, help="The project's name.")
@click.option(
    "--engine",
    type=click.Choice(["argocd", "argocd_kargo", "flux"]),
    default="argocd",
    show_default=True,
    help="Argo CD, Argo CD with Kargo promoting between the tiers, or Flux.",
)
@click.option("--cluster", required=True)
@click.option(
    "--tiers", required=True, help="Comma-separated, in promotion order: dev,staging,prod."
)
@pass_context
def request_project(context: Context, tenant: str | None, tiers: str, **payload: Any) -> None:
    """Request an application project with one namespace per tier."""
    submit(
        context,
        tenant,
        "project",
        {**payload, "tiers": [t.strip() for t in tiers.split(",") if t.strip()]},
    )


@request.command("environment")
@tenant_option
@click.option("--project", required=True)
@click.option("--tier", required=True)
@click.option("--cluster", required=True)
@click.option("--cpu", required=True)
@click.option("--memory", required=True)
@click.option("--storage")
@pass_context
def request_environment(context: Context, tenant: str | None, **payload: Any) -> None:
    """Request another environment (tier) of a project."""
    submit(context, tenant, "environment", payload)


@cli.command()
@click.argument("request_id", type=int)
@click.option("--reason", default="", help="A note kept with the approval.")
@pass_context
def approve(context: Context, request_id: int, reason: str) -> None:
    """Approve a request: the plan you approve is the one Berth shows now."""
    seen = context.berth.call("request", path={"id": request_id})
    digest = (seen.get("plan") or {}).get("digest") or seen.get("digest") or ""
    done = context.berth.call(
        "approve", path={"id": request_id}, body={"plan_digest": digest, "note": reason}
    )
    click.echo(f"Request #{request_id}: {done['state']}")


@cli.command()
@click.argument("request_id", type=int)
@click.option("--reason", required=True, help="Why: the requester reads it.")
@pass_context
def reject(context: Context, request_id: int, reason: str) -> None:
    """Reject a request."""
    done = context.berth.call("reject", path={"id": request_id}, body={"reason": reason})
    click.echo(f"Request #{request_id}: {done['state']}")


# --- reading ---------------------------------------------------------------------------------


@cli.command()
@click.argument("what", type=click.Choice(sorted(COLUMNS)))
@click.option("-o", "--output", type=FORMATS, default="table", show_default=True)
@click.option("--tenant", envvar="BERTH_TENANT", help="Only this tenant's.")
@click.option("--state", help="Only in this state.")
@pass_context
def get(context: Context, what: str, output: str, tenant: str | None, state: str | None) -> None:
    """List requests, namespaces or environments you can see."""
    show(context.berth.every(what, tenant=tenant, state=state), output, COLUMNS[what])


@cli.command()
@click.argument("namespace")
@click.option(
    "--credentials",
    type=click.Choice(["kubelogin", "berth"]),
    default="kubelogin",
    show_default=True,
    help="Who signs kubectl in: kubelogin, or `berth token --exec`.",
)
@click.option("--cluster", help="When the namespace's name is live on several clusters.")
@click.option(
    "--output",
    "-o",
    "target",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write it here (readable by you only) instead of printing it.",
)
@click.option(
    "--deploy-token",
    is_flag=True,
    help="For a pipeline: a short-lived token with the tier's member rights in NAMESPACE "
    "(where its tier allows them), instead of signing in as you.",
)
@click.option(
    "--ttl",
    "ttl_minutes",
    type=click.IntRange(10, 60),
    default=30,
    show_default=True,
    help="With --deploy-token: minutes it works.",
)
@click.option("--purpose", default="", help="With --deploy-token: what it is for.")
@pass_context
def kubeconfig(
    context: Context,
    namespace: str,
    credentials: str,
    cluster: str | None,
    target: Path | None,
    deploy_token: bool,
    ttl_minutes: int,
    purpose: str,
) -> None:
    """A kubeconfig for NAMESPACE (its name or id) that signs in as you, and what to try;
    or, with --deploy-token, one holding a short-lived token for a pipeline."""
    if deploy_token:
        minted = context.berth.call(
            "mint_deploy_token",
            path={"namespace": namespace},
            body={"ttl_minutes": ttl_minutes, "purpose": purpose, "cluster": cluster},
        )
        _write_kubeconfig(minted["kubeconfig"], target)
        err.print(
            f"Deploy token {minted['service_account']}: {minted['cluster_role']} in "
            f"{minted['namespace']} until {minted['expires_at']}."
        )
        return
    answer = context.berth.call(
        "kubeconfig",
        path={"namespace": namespace},
        query={"credentials": credentials, "cluster": cluster},
    )
    _write_kubeconfig(answer["kubeconfig"], target)
    err.print(
        f"Your role here: {answer['role'] or 'none'}"
        + (f" ({answer['cluster_role']})" if answer["cluster_role"] else "")
    )
    for attempt in answer["try"]:
        err.print(f"  $ {attempt['command']}\n    {attempt['expect']}", highlight=False)


def _write_kubeconfig(text: str, target: Path | None) -> None:
    if target is None:
        click.echo(text, nl=False)
        return
    write_private(target, text.encode())
    err.print(f"Wrote {target}: export KUBECONFIG={target.resolve()}")


@cli.command()
@click.option(
    "--exec",
    "as_exec",
    is_flag=True,
    required=True,
    help="Print a client.authentication.k8s.io/v1 ExecCredential (kubectl's exec plugin protocol).",
)
@click.option("--oidc-issuer-url", required=True)
@click.option("--oidc-client-id", required=True)
@click.option(
    "--grant",
    type=click.Choice([oidc.AUTO, oidc.BROWSER, oidc.DEVICE]),
    default=oidc.AUTO,
    show_default=True,
    help="A new sign-in: in a browser (authorization code with PKCE), with the device grant, "
    "or the browser where a loopback port is free, else the device grant.",
)
@click.option(
    "--listen-address",
    "listen_on",
    multiple=True,
    default=oidc.loopback.DEFAULT_LISTEN,
    show_default=True,
    help="Where the browser sign-in's answer is received (the first free one); the provider "
    "must accept http://localhost:<port> as a redirect URI. Port 0: any free port.",
)
@click.option("--no-browser", is_flag=True, help="Only print the sign-in address; open no browser.")
@click.option(
    "--timeout",
    "wait_seconds",
    type=click.IntRange(10, 3600),
    default=oidc.loopback.DEFAULT_WAIT_SECONDS,
    show_default=True,
    help="Seconds to wait for a browser sign-in.",
)
def token(
    as_exec: bool,
    oidc_issuer_url: str,
    oidc_client_id: str,
    grant: str,
    listen_on: tuple[str, ...],
    no_browser: bool,
    wait_seconds: int,
) -> None:
    """kubectl's exec plugin: your ID token, cached, refreshed, or from a new sign-in."""
    how = oidc.SignIn(
        grant=grant, listen_on=listen_on, open_browser=not no_browser, wait_seconds=wait_seconds
    )
    value = oidc.id_token(oidc_issuer_url, oidc_client_id, how=how)
    click.echo(json.dumps(oidc.exec_credential(value)))


cli.add_command(env)
cli.add_command(access)
cli.add_command(wake)


@cli.command()
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
def completion(shell: str) -> None:
    """Print the shell completion script: eval "$(berth completion bash)"."""
    complete = get_completion_class(shell)(cli, {}, "berth", "_BERTH_COMPLETE")
    click.echo(complete.source())


def main() -> None:
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Exit as done:
        sys.exit(done.exit_code)
    except click.Abort:
        err.print("Aborted.")
        sys.exit(1)
    except click.ClickException as problem:
        problem.show()
        sys.exit(problem.exit_code)
    except ApiProblem as problem:
        err.print(problem.describe(), highlight=False)
        sys.exit(1)
    except (NotConfigured, oidc.SignInFailed) as problem:
        err.print(str(problem), highlight=False)
        sys.exit(2 if isinstance(problem, NotConfigured) else 1)
    except httpx.HTTPError as problem:
        err.print(f"Cannot reach Berth: {problem}", highlight=False)
        sys.exit(1)


if __name__ == "__main__":
    main()
