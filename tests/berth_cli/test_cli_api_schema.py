"""The `berth` command cannot drift from the API: every call it makes is in
berth_cli.calls.CALLS, and this holds that table to the API's OpenAPI schema (each path,
method, path and query parameter, and body field). Also what a person installs and reads
first: the `berth` console script, `--help` on every command, and shell completion.
"""

from __future__ import annotations

import json
import tomllib

import pytest

from berth_cli.calls import CALLS
from tests.support.berth_cli import ROOT, berth


def resolved(schema: dict, node: dict) -> dict:
    while "$ref" in node:
        node = schema["components"]["schemas"][node["$ref"].rsplit("/", 1)[1]]
    return node


@pytest.mark.django_db
def test_every_call_the_command_makes_is_in_the_api_schema_with_what_it_sends(client):
    schema = json.loads(client.get("/api/schema/", {"format": "json"}).content)

    for name, call in CALLS.items():
        assert call.path in schema["paths"], f"{name}: {call.path} is not in the API"
        operation = schema["paths"][call.path].get(call.method.lower())
        assert operation is not None, f"{name}: {call.method} {call.path} is not in the API"
        parameters = {(p["in"], p["name"]) for p in operation.get("parameters", [])}
        placeholders = {part[1:-1] for part in call.path.split("/") if part.startswith("{")}
        assert {("path", p) for p in placeholders} <= parameters, name
        assert {("query", q) for q in call.query} <= parameters, name
        if call.body:
            body = resolved(
                schema, operation["requestBody"]["content"]["application/json"]["schema"]
            )
            assert set(call.body) <= set(body["properties"]), name


def test_the_project_installs_the_berth_console_script():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]

    assert project["scripts"]["berth"] == "berth_cli.main:main"
    assert (
        "berth_cli*"
        in tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"][
            "find"
        ]["include"]
    )


@pytest.mark.processes
def test_help_is_everywhere_and_completion_is_printed(tmp_path):
    for command in (
        [],
        ["request", "namespace"],
        ["env", "create"],
        ["get"],
        ["token"],
        ["kubeconfig"],
        ["approve"],
        ["login"],
    ):
        shown = berth(*command, "--help", home=tmp_path)
        assert shown.returncode == 0, (command, shown.stderr)
        assert "Usage: " in shown.stdout
    completion = berth("completion", "bash", home=tmp_path)
    assert completion.returncode == 0 and "_BERTH_COMPLETE" in completion.stdout
