"""What the `berth` command prints: tables, JSON or YAML on stdout; messages on stderr."""

from __future__ import annotations

import json
from typing import Any

import click
import yaml
from rich.console import Console
from rich.table import Table

err = Console(stderr=True)


def show(
    rows: list[dict[str, Any]] | dict[str, Any], output: str, columns: tuple[str, ...]
) -> None:
    if output == "json":
        click.echo(json.dumps(rows, indent=2))
    elif output == "yaml":
        click.echo(yaml.safe_dump(rows, sort_keys=False), nl=False)
    else:
        table = Table(*columns, box=None, pad_edge=False)
        for row in rows if isinstance(rows, list) else [rows]:
            table.add_row(*("" if row.get(c) is None else str(row.get(c)) for c in columns))
        Console(soft_wrap=True).print(table)
