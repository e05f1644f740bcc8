"""docs/automation.md's CI recipes, run as written against a live Berth (the `live`
fixture): the berth commands the page shows create an ephemeral environment, refuse a
second create, and delete it (a retried delete is harmless). The commands are read from the
page itself, so an edit that breaks one fails here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.berth_cli import ROOT


def recipe_commands() -> list[str]:
    """The berth commands docs/automation.md's recipes run, each once, in order."""
    text = (ROOT / "docs" / "automation.md").read_text()
    found: list[str] = []
    for line in text.splitlines():
        command = line.strip().removeprefix("- ").removeprefix("run: ").strip()
        if command.startswith("berth env ") and command not in found:
            found.append(command)
    return found


def test_the_ci_recipes_run_as_written_against_a_live_berth(live):
    commands = recipe_commands()
    assert [c.split()[2] for c in commands] == ["create", "delete"]  # one of each, everywhere
    environment = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("BERTH_", "DJANGO_"))},
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "BERTH_URL": live["url"],
        "BERTH_TOKEN": live["dev"],
        "NO_COLOR": "1",
        "XDG_CONFIG_HOME": str(live["home"] / "config"),
        "TENANT": "payments",
        "PROJECT": "shop",
        "PR": "7",
        "BRANCH": "feature/seven",
    }

    def sh(command: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            ["bash", "-c", command],
            env=environment,
            cwd=live["home"],
            capture_output=True,
            text=True,
            timeout=120,
        )

    created = sh(commands[0])
    assert created.returncode == 0, created.stderr
    namespace = created.stdout.strip()
    assert live["sandbox"].get("Namespace", namespace) is not None
    again = sh(commands[0])
    assert again.returncode == 1, again.stdout  # the page says a second create is refused
    deleted = sh(commands[1])
    assert deleted.returncode == 0, deleted.stderr
    assert sh(commands[1]).returncode == 0  # a retried closing job is harmless
    environment_row = json.loads(sh("berth get environments -o json").stdout)
    assert {row["state"] for row in environment_row if row["env_slug"] == "pr-7"} <= {
        "ending",
        "ended",
    }
