"""docs/automation.md's CI recipes as their pipelines run them: the GitHub workflow read by
GitHub's own parser (integrations/ci/github-run.mjs) and its run steps executed in order
as a runner would, the GitLab pipeline run by gitlab-ci-local with the shell executor."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.berth_cli import ROOT

TOOLS = ROOT / "integrations" / "ci"
GITLAB_CI_LOCAL = TOOLS / "node_modules" / ".bin" / "gitlab-ci-local"
PR, BRANCH = "7", "feature/seven"


def page() -> str:
    return (ROOT / "docs" / "automation.md").read_text()


def recipe_commands() -> list[str]:
    """The commands of the page's first sh block: what both recipes run."""
    block = re.search(r"```sh\n(.*?)```", page(), re.S)
    assert block, "docs/automation.md lost its sh block"
    return [line for line in block.group(1).splitlines() if line.strip()]


def recipe(heading: str) -> str:
    """The yaml block under `## <heading>`."""
    section = page().split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```yaml\n(.*?)```", section, re.S)
    assert block, f"docs/automation.md's {heading} section lost its recipe"
    return block.group(1)


def node_tools() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the recipes' tools run on it")
    if not GITLAB_CI_LOCAL.exists():
        pytest.skip(
            "integrations/ci's packages are not installed: `make ci-recipes` (make install "
            "and .ci/run do it)"
        )
    return node


def runner_environment(live: dict[str, Any], home: Path) -> dict[str, str]:
    """What a runner's shell has: PATH with `berth` (this Berth's) and kubectl, and nothing
    of the test's own Berth or Django settings."""
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not installed: the recipes deploy with it")
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith(("BERTH_", "DJANGO_", "KUBE"))},
        "PATH": os.pathsep.join(
            [str(Path(sys.executable).parent), str(Path(kubectl).parent), os.environ["PATH"]]
        ),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / "config"),
        "NO_COLOR": "1",
    }


def manifest(commit: str) -> str:
    """What the pipeline built: a ConfigMap naming its commit."""
    return yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "shop-build"},
            "data": {"commit": commit},
        }
    )


def github_plan(workflow: Path, action: str, secrets: dict[str, str]) -> dict[str, Any]:
    """The workflow for one pull_request event, as GitHub's parser and expressions read it."""
    context = {
        "github": {
            "event_name": "pull_request",
            "event": {"action": action, "number": int(PR)},
            "head_ref": BRANCH,
        },
        "secrets": secrets,
    }
    ran = subprocess.run(
        [node_tools(), str(TOOLS / "github-run.mjs"), str(workflow)],
        input=json.dumps(context),
        capture_output=True,
        text=True,
        timeout=120,
        cwd=TOOLS,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    return json.loads(ran.stdout)


def run_github_event(
    workflow: Path, action: str, checkout: Path, environment: dict[str, str], secrets: dict
) -> dict[str, dict[str, str]]:
    """Run the jobs the event starts, their `run` steps in order with `bash -e` (a runner's
    default shell) in the checkout; each step's outputs by job and step id."""
    plan = github_plan(workflow, action, secrets)
    assert plan["errors"] == []
    outputs: dict[str, dict[str, str]] = {}
    for job in (j for j in plan["jobs"] if j["runs"]):
        for step in job["steps"]:
            if "uses" in step:
                assert step["uses"].startswith("actions/checkout@"), step
                continue  # `checkout` is the test's own folder
            output = checkout.parent / f"{job['id']}-{step['id']}.output"
            output.write_text("")
            ran = subprocess.run(
                ["bash", "-e", "-c", step["run"]],
                env={**environment, **job["env"], **step["env"], "GITHUB_OUTPUT": str(output)},
                cwd=checkout,
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
            assert ran.returncode == 0, f"{job['id']}/{step['id']}: {ran.stderr}"
            outputs[f"{job['id']}.{step['id']}"] = dict(
                line.split("=", 1) for line in output.read_text().splitlines() if "=" in line
            )
    return outputs


def gitlab_ci_local(
    repository: Path, job: str, environment: dict[str, str], variables: dict[str, str]
) -> subprocess.CompletedProcess:
    """One job of the repository's .gitlab-ci.yml, as a merge request's pipeline runs it."""
    node_tools()
    predefined = {
        "CI_PIPELINE_SOURCE": "merge_request_event",
        "CI_MERGE_REQUEST_IID": PR,
        "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME": BRANCH,
    }
    arguments = [
        str(GITLAB_CI_LOCAL),
        "--force-shell-executor",
        "--home",
        str(repository.parent / "gitlab-ci-local-home"),
        "--ignore-predefined-vars",
        ",".join(predefined),
    ]
    for name, value in {**predefined, **variables}.items():
        arguments += ["--variable", f"{name}={value}"]
    return subprocess.run(
        [*arguments, job],
        env=environment,
        cwd=repository,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def commit(repository: Path, message: str) -> None:
    """A push: the pipeline file and the manifests (never what a job left behind)."""
    for command in (["add", ".gitlab-ci.yml", "k8s"], ["commit", "-qm", message]):
        subprocess.run(
            ["git", "-c", "user.name=ci", "-c", "user.email=ci@example.com", *command],
            cwd=repository,
            check=True,
        )
