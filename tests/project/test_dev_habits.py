"""The checks a contributor runs (make lint, pre-commit) stay the same checks, pinned."""

import re
import tomllib
from pathlib import Path

import pytest
import yaml
from django.core.exceptions import ImproperlyConfigured

from portal.config import checks

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
FERNET = "q8Qh7Jqg0r4mX2eQnYV1m1cVt9C9bq0z6xk3h8W5e3k="


def lint_recipe() -> list[str]:
    makefile = (ROOT / "Makefile").read_text()
    recipe = re.search(r"^lint:.*\n((?:\t.*\n)+)", makefile, re.MULTILINE)
    assert recipe, "the Makefile has a lint target"
    return [line.strip() for line in recipe.group(1).splitlines()]


def test_make_lint_checks_format_lint_types_and_layers():
    assert lint_recipe() == [
        "$(BIN)/ruff format --check .",
        "$(BIN)/ruff check .",
        "$(BIN)/pyright",
        "$(BIN)/lint-imports --no-cache",
    ]


def test_pre_commit_runs_the_same_tools_from_the_projects_virtualenv():
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())
    hooks = {hook["id"]: hook for repo in config["repos"] for hook in repo["hooks"]}
    assert set(hooks) == {"ruff-check", "ruff-format", "lint-imports", "pyright"}
    assert "--fix" in hooks["ruff-check"]["entry"]
    for hook in hooks.values():
        # Nothing to download: the versions pinned in pyproject.toml, installed by make.
        assert hook["language"] == "system"
        assert hook["entry"].startswith(".venv/bin/")


def test_the_tools_are_pinned_in_the_dev_extra():
    pins = dict(
        requirement.split("==")
        for requirement in PYPROJECT["project"]["optional-dependencies"]["dev"]
    )
    for tool in (
        "ruff",
        "pyright",
        "pre-commit",
        "import-linter",
        # Without them pyright knows no `Model.objects`: the port and the kinds fail to check.
        "django-types",
        "djangorestframework-types",
    ):
        assert re.fullmatch(r"\d+(\.\d+)+", pins.get(tool, "")), tool


def test_the_type_checker_is_at_least_standard_on_paths_that_exist():
    pyright = PYPROJECT["tool"]["pyright"]
    assert pyright["typeCheckingMode"] in {"standard", "strict"}
    assert {
        "provisioning/plan",
        "provisioning/gitops_plan",
        "provisioning/guardrails",
        "tenants/provisioner.py",
        "tenants/kinds",
    } <= set(pyright["include"])
    for path in pyright["include"]:
        assert (ROOT / path).exists(), path


# --- the startup refusals settings.py applies (portal.config.checks) -----------------------


def test_production_accepts_a_long_secret_and_a_real_fernet_key():
    problems = checks.production_problems(
        debug=False, secret_key="x" * 50, fernet_keys=[FERNET], dev_oidc=False
    )
    assert problems == []


def test_production_names_every_problem_at_once():
    problems = checks.production_problems(
        debug=True, secret_key="changeme", fernet_keys=[FERNET, "nope"], dev_oidc=True
    )
    assert [problem.split(" ")[0] for problem in problems] == [
        "BERTH_DEBUG",
        "SECRET_KEY",
        "BERTH_FERNET_KEYS",
        "BERTH_DEV_OIDC",
    ]
    assert "key #2 is not a Fernet key" in problems[2]


def test_half_configured_sign_on_names_what_is_missing():
    with pytest.raises(ImproperlyConfigured, match="set OIDC_CLIENT_SECRET as well"):
        checks.refuse_half_configured_sign_on(
            {"OIDC_ISSUER": "https://idp", "OIDC_CLIENT_ID": "berth", "OIDC_CLIENT_SECRET": ""}
        )
    checks.refuse_half_configured_sign_on({"OIDC_ISSUER": "", "OIDC_CLIENT_ID": ""})


def test_egress_allow_takes_networks_only():
    checks.refuse_malformed_networks(["127.0.0.0/8", "10.20.0.0/16", "::1/128"])
    with pytest.raises(ImproperlyConfigured, match="'intranet' is not a network"):
        checks.refuse_malformed_networks(["10.0.0.0/8", "intranet"])
