"""What every `berth` command is given: the Berth it talks to, and the tenant it acts in."""

from __future__ import annotations

from collections.abc import Callable

import click

from berth_cli.client import Berth, read_config


class Context:
    def __init__(self, url: str | None) -> None:
        self.url = url
        self._berth: Berth | None = None

    @property
    def berth(self) -> Berth:
        if self._berth is None:
            self._berth = Berth.from_settings(url=self.url)
        return self._berth

    def tenant(self, given: str | None) -> str:
        """--tenant / BERTH_TENANT, the config file's, else the caller's only tenant."""
        if given:
            return given
        if read_config().get("tenant"):
            return read_config()["tenant"]
        slugs = [row["slug"] for row in self.berth.every("tenants")]
        if len(slugs) == 1:
            return slugs[0]
        raise click.UsageError(
            f"Name the tenant with --tenant (you are in {', '.join(slugs) or 'no tenant'})."
        )


pass_context = click.make_pass_decorator(Context)


def tenant_option(function: Callable) -> Callable:
    return click.option(
        "--tenant",
        envvar="BERTH_TENANT",
        help="The tenant's slug (BERTH_TENANT; default: your only one).",
    )(function)
