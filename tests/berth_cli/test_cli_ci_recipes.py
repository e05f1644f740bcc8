"""docs/automation.md's CI recipes, run as written against a live Berth on a fenced stand-in
(the `fenced_live` fixture): the commands the page shows create an ephemeral environment,
deploy a manifest into it with a deploy token, refuse a second create, and delete it (a
retried delete is harmless). The commands are read from the page itself, and both recipes
must run exactly those, so an edit that breaks one fails here.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tenants.models import AuditEvent, DeployToken
from tests.support.berth_cli import ROOT

MANIFEST = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "shop-build"},
    "data": {"commit": "0123abc"},
}


def page() -> str:
    return (ROOT / "docs" / "automation.md").read_text()


def recipe_commands() -> list[str]:
    """The commands of the page's first sh block: what both recipes run."""
    block = re.search(r"```sh\n(.*?)```", page(), re.S)
    assert block, "docs/automation.md lost its sh block"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_both_recipes_run_the_commands_the_page_lists():
    commands = recipe_commands()
    recipes = re.findall(r"```yaml\n(.*?)```", page(), re.S)
    assert len(recipes) == 2  # GitHub Actions, GitLab CI
    for recipe in recipes:
        lines = [
            line.strip().removeprefix("- ").removeprefix("run: ") for line in recipe.splitlines()
        ]
        assert [c for c in commands if c in lines] == commands, recipe[:200]


@pytest.mark.processes
def test_the_ci_recipes_run_as_written_against_a_live_berth(fenced_live):
    live = fenced_live
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not installed: the recipes deploy with it")
    create, mint, deploy, delete = recipe_commands()
    (live["home"] / "k8s").mkdir()
    (live["home"] / "k8s" / "build.yaml").write_text(yaml.safe_dump(MANIFEST))
    environment = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("BERTH_", "DJANGO_", "KUBE"))},
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{Path(kubectl).parent}{os.pathsep}"
        f"{os.environ['PATH']}",
        "BERTH_URL": live["url"],
        "BERTH_TOKEN": live["dev"],
        "NO_COLOR": "1",
        "HOME": str(live["home"]),
        "XDG_CONFIG_HOME": str(live["home"] / "config"),
        "TENANT": "payments",
        "PROJECT": "shop",
        "PR": "7",
        "BRANCH": "feature/seven",
    }

    def sh(*commands: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            ["bash", "-euo", "pipefail", "-c", "\n".join(commands)],
            env=environment,
            cwd=live["home"],
            capture_output=True,
            text=True,
            timeout=180,
        )

    deployed = sh(create, mint, deploy, 'echo "$NAMESPACE"')
    assert deployed.returncode == 0, deployed.stderr
    namespace = deployed.stdout.strip().splitlines()[-1]
    config_map = live["sandbox"].get("ConfigMap", "shop-build", namespace)
    assert config_map is not None and config_map["data"] == {"commit": "0123abc"}
    (token,) = DeployToken.objects.filter(namespace__name=namespace)
    assert token.minted_by.username == "dev" and token.purpose == "pr-7"
    assert AuditEvent.objects.filter(action="deploy_token.mint", object_id=str(token.pk)).exists()
    assert (live["home"] / "deploy.kubeconfig").stat().st_mode & 0o077 == 0  # the user's only

    again = sh(create)
    assert again.returncode == 1, again.stdout  # the page says a second create is refused
    deleted = sh(delete)
    assert deleted.returncode == 0, deleted.stderr
    assert sh(delete).returncode == 0  # a retried closing job is harmless
    environment_row = json.loads(sh("berth get environments -o json").stdout)
    assert {row["state"] for row in environment_row if row["env_slug"] == "pr-7"} <= {
        "ending",
        "ended",
    }
