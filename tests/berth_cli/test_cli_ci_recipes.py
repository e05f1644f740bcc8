"""docs/automation.md's CI recipes, run as their pipelines run them against a live Berth on
a fenced stand-in (the `fenced_live` fixture): the GitHub workflow, read by GitHub's own
parser, for a pull request opened, pushed to and closed; the GitLab pipeline, run by
gitlab-ci-local, for two pushes and the stop. The first push makes the environment and
deploys into it with a deploy token; the second finds the same environment and deploys its
change there; closing ends it. Both recipes must run the commands the page lists, so an
edit that breaks one fails here.
"""

from __future__ import annotations

import subprocess

import pytest

from tenants.choices import EnvironmentState, RequestKind
from tenants.models import DeployToken, EphemeralEnvironment, Request
from tests.support.ci_recipes import (
    PR,
    commit,
    github_plan,
    gitlab_ci_local,
    manifest,
    recipe,
    recipe_commands,
    run_github_event,
    runner_environment,
)


def test_both_recipes_run_the_commands_the_page_lists():
    commands = recipe_commands()
    for heading in ("GitHub Actions", "GitLab CI"):
        lines = [
            line.strip().removeprefix("- ").removeprefix("run: ")
            for line in recipe(heading).splitlines()
        ]
        create, mint, deploy, end = commands
        assert [c for c in (create, mint, deploy) if c in lines] == [create, mint, deploy]
        assert end in lines, heading  # the closing job's


def the_environment() -> EphemeralEnvironment:
    (environment,) = EphemeralEnvironment.objects.filter(slug=f"pr-{PR}")
    return environment


def deployed_commit(live: dict, namespace: str) -> str:
    config_map = live["sandbox"].get("ConfigMap", "shop-build", namespace)
    assert config_map is not None, f"nothing deployed into {namespace}"
    return config_map["data"]["commit"]


@pytest.mark.processes  # node
def test_the_github_workflow_parses_and_a_broken_one_does_not(tmp_path):
    workflow = tmp_path / "preview.yaml"
    workflow.write_text(recipe("GitHub Actions"))
    for action, jobs in (
        ("opened", ["preview"]),
        ("synchronize", ["preview"]),
        ("closed", ["cleanup"]),
    ):
        plan = github_plan(workflow, action, {"BERTH_URL": "https://berth.example.com"})
        assert plan["errors"] == []
        assert [job["id"] for job in plan["jobs"] if job["runs"]] == jobs
    workflow.write_text(recipe("GitHub Actions").replace("runs-on:", "runs_on:", 1))
    broken = github_plan(workflow, "opened", {})
    assert any("runs_on" in error for error in broken["errors"]), broken["errors"]


@pytest.mark.processes  # a live server, node, kubectl
def test_the_github_workflow_runs_for_opened_synchronize_and_closed(fenced_live):
    live, checkout = fenced_live, fenced_live["home"] / "checkout"
    (checkout / "k8s").mkdir(parents=True)
    workflow = live["home"] / "preview.yaml"
    workflow.write_text(recipe("GitHub Actions"))
    environment = runner_environment(live, live["home"])
    secrets = {"BERTH_URL": live["url"], "BERTH_TOKEN": live["dev"]}

    (checkout / "k8s" / "build.yaml").write_text(manifest("1111aaa"))
    opened = run_github_event(workflow, "opened", checkout, environment, secrets)
    first = the_environment()
    assert first.state == EnvironmentState.LIVE
    assert deployed_commit(live, first.namespace.name) == "1111aaa"
    assert opened["preview.berth"]["BERTH_NAMESPACE"] == first.namespace.name
    assert opened["preview.berth"]["BERTH_ENVIRONMENT_URL"] == (
        f"{live['url']}/environments/{first.pk}/"
    )

    (checkout / "k8s" / "build.yaml").write_text(manifest("2222bbb"))
    run_github_event(workflow, "synchronize", checkout, environment, secrets)
    assert the_environment().pk == first.pk  # found again, not refused, not a second one
    assert Request.objects.filter(kind=RequestKind.EPHEMERAL).count() == 1
    assert deployed_commit(live, first.namespace.name) == "2222bbb"
    assert DeployToken.objects.filter(namespace=first.namespace).count() == 2  # one per push

    closed = run_github_event(workflow, "closed", checkout, environment, secrets)
    assert "preview.berth" not in closed  # the deploy job does not run on close
    assert the_environment().state == EnvironmentState.ENDED
    assert live["sandbox"].get("Namespace", first.namespace.name) is None


@pytest.mark.processes  # a live server, gitlab-ci-local (node), kubectl
def test_gitlab_ci_local_runs_two_pushes_and_the_stop(fenced_live):
    live, repository = fenced_live, fenced_live["home"] / "shop"
    (repository / "k8s").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repository)], check=True)
    subprocess.run(
        ["git", "remote", "add", "origin", "https://gitlab.example.com/payments/shop.git"],
        cwd=repository,
        check=True,
    )
    (repository / ".gitlab-ci.yml").write_text(recipe("GitLab CI"))
    environment = runner_environment(live, live["home"])
    variables = {"BERTH_URL": live["url"], "BERTH_TOKEN": live["dev"]}

    (repository / "k8s" / "build.yaml").write_text(manifest("1111aaa"))
    commit(repository, "first push")
    first_push = gitlab_ci_local(repository, "preview", environment, variables)
    assert first_push.returncode == 0, first_push.stdout + first_push.stderr
    first = the_environment()
    assert deployed_commit(live, first.namespace.name) == "1111aaa"
    assert "PASS  preview" in first_push.stdout
    dotenv = (repository / "berth.env").read_text()  # the job's dotenv report
    assert f"BERTH_ENVIRONMENT_URL={live['url']}/environments/{first.pk}/" in dotenv

    (repository / "k8s" / "build.yaml").write_text(manifest("2222bbb"))
    commit(repository, "second push")
    second_push = gitlab_ci_local(repository, "preview", environment, variables)
    assert second_push.returncode == 0, second_push.stdout + second_push.stderr
    assert "found again" in second_push.stdout + second_push.stderr
    assert the_environment().pk == first.pk
    assert Request.objects.filter(kind=RequestKind.EPHEMERAL).count() == 1
    assert deployed_commit(live, first.namespace.name) == "2222bbb"

    stop = gitlab_ci_local(repository, "preview-stop", environment, variables)
    assert stop.returncode == 0, stop.stdout + stop.stderr
    assert the_environment().state == EnvironmentState.ENDED
    assert live["sandbox"].get("Namespace", first.namespace.name) is None
