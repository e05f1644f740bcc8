"""Berth's Backstage backend module (integrations/backstage) as npm builds and tests it: its
own tests (`npm test`) with the OpenAPI description Berth writes, which every body berth:request
sends and every answer it reads is held to; then the action, registered by the module in a
Backstage backend, asking a live Berth for namespaces: one ready at once, one that waits for
an approver, one Berth refuses with a problem detail; and the backend's URL reader, with
Berth's added, reading a member's catalog from the live Berth with the token."""

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

from tenants.choices import NamespaceState, RequestState
from tenants.models import Namespace, Request
from tests.support.backstage import INTEGRATION, node_with

# node and npm are programs; the live Berth is a server in this process, the database real.
pytestmark = [
    pytest.mark.processes,
    pytest.mark.django_db(transaction=True),
]

ROOT = Path(__file__).resolve().parents[2]


def node_with_the_module() -> str:
    node = node_with("@backstage/plugin-scaffolder-node")
    built = INTEGRATION / "dist" / ".tsbuildinfo"
    if not built.is_file():
        pytest.skip("integrations/backstage is not built: `make backstage` (npm run build)")
    sources = [*INTEGRATION.glob("src/**/*.ts"), *INTEGRATION.glob("test/**/*.ts")]
    stale = [str(p.relative_to(ROOT)) for p in sources if p.stat().st_mtime > built.stat().st_mtime]
    assert not stale, f"integrations/backstage's build is older than {stale}: `make backstage`"
    return node


def test_the_modules_tests_pass_against_berths_openapi_description(tmp_path: Path):
    node_with_the_module()
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed: the module's tests run with `npm test`")
    schema = tmp_path / "berth-openapi.json"
    written = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "spectacular",
            "--format",
            "openapi-json",
            "--file",
            str(schema),
        ],
        cwd=ROOT,
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "tests.settings",
            "BERTH_DATA_DIR": str(tmp_path / "data"),
        },
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert written.returncode == 0, written.stderr

    ran = subprocess.run(
        [npm, "test"],
        cwd=INTEGRATION,
        env={**os.environ, "BERTH_OPENAPI": str(schema)},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )

    assert ran.returncode == 0, ran.stdout[-6000:] + ran.stderr[-2000:]
    counts = dict(re.findall(r"^# (pass|fail|skipped|cancelled) (\d+)$", ran.stdout, re.M))
    assert counts.get("fail") == "0" and counts.get("cancelled") == "0", counts
    # Nothing skipped: the tests that need the description ran with it.
    assert "# SKIP" not in ran.stdout and counts.get("skipped") == "0", ran.stdout[-3000:]
    assert int(counts["pass"]) >= 25, counts


# A dev's namespace of payments, as the template's step asks for it.
NAMESPACE = {
    "kind": "namespace",
    "tenant": "payments",
    "app": "backstage",
    "tier": "dev",
    "cluster": "sandbox",
    "cpu": "500m",
    "memory": "1Gi",
}


def run_script(
    name: str, live: dict[str, Any], person: str, **asked: Any
) -> tuple[int, dict[str, Any]]:
    """One of the module's scripts (scripts/<name>) against the live Berth, berth.token the
    person's API token, the rest of its input as JSON on standard input; its exit code and
    answer. The token is never in what it prints."""
    ran = subprocess.run(
        [node_with_the_module(), str(INTEGRATION / "scripts" / name)],
        cwd=INTEGRATION,
        input=json.dumps({"baseUrl": live["url"], "token": live[person], **asked}),
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert ran.stdout, ran.stderr
    assert live[person] not in ran.stdout + ran.stderr, "the token is never logged"
    return ran.returncode, json.loads(ran.stdout)


def request_once(live: dict[str, Any], person: str, **input: object) -> tuple[int, dict[str, Any]]:
    """berth:request run once by the module's action against the live Berth: its outputs,
    log lines and error."""
    return run_script("request-once.mjs", live, person, input=input)


def test_berth_request_asks_a_live_berth_and_waits_until_the_namespace_is_ready(
    live: dict[str, Any],
):
    code, step = request_once(live, "dev", **NAMESPACE, wait=True, timeoutSeconds=120)

    assert code == 0, step
    created = Request.objects.get(pk=step["outputs"]["requestId"])
    assert (created.kind, created.requester.username) == ("namespace", "dev")
    assert created.state == RequestState.READY, created.status_message
    namespace = Namespace.objects.get(name="payments-backstage-dev")
    assert namespace.state == NamespaceState.ACTIVE
    assert namespace.request == created
    assert live["sandbox"].get("Namespace", "payments-backstage-dev") is not None
    assert step["outputs"] == {
        "requestId": created.pk,
        "url": f"{live['url']}/requests/{created.pk}/",
        "state": "ready",
        "namespaces": ["payments-backstage-dev"],
        "namespace": "payments-backstage-dev",
    }
    assert step["error"] is None


def test_a_namespace_that_needs_an_approver_ends_the_step_with_its_page(live: dict[str, Any]):
    code, step = request_once(live, "dev", **{**NAMESPACE, "tier": "staging"})

    assert code == 0, step
    created = Request.objects.get(pk=step["outputs"]["requestId"])
    assert created.state == RequestState.SUBMITTED
    assert step["outputs"]["state"] == "submitted"
    assert step["outputs"]["namespace"] == "payments-backstage-staging"
    assert step["outputs"]["url"] == f"{live['url']}/requests/{created.pk}/"
    assert any(
        "waits for approval by tenant owner (rule staging-needs-tenant-owner)" in line["message"]
        for line in step["logs"]
    ), step["logs"]


def test_berths_problem_detail_fails_the_step_field_by_field(live: dict[str, Any]):
    code, step = request_once(live, "dev", **{**NAMESPACE, "app": "Not_A_Label", "cpu": "64"})

    assert code == 1
    assert step["error"].startswith("Berth refused the request: 400 Your request is not valid. ")
    assert "payload.app: " in step["error"]
    assert not Request.objects.filter(payload__app="Not_A_Label").exists()


def read_once(live: dict[str, Any], person: str, path: str, etag: str = "") -> dict[str, Any]:
    """One URL of the live Berth read through a Backstage backend's UrlReaderService with
    Berth's reader added: as the catalog reads it."""
    return run_script("read-once.mjs", live, person, url=live["url"] + path, etag=etag)[1]


def test_backstage_reads_a_members_catalog_from_a_live_berth_with_the_token(
    live: dict[str, Any],
):
    import yaml

    read = read_once(live, "dev", "/api/v1/backstage/catalog-info.yaml")

    assert read["error"] is None, read
    entities = list(yaml.safe_load_all(read["content"]))
    tenants = {e["metadata"]["annotations"]["berth.dev/tenant"] for e in entities}
    assert tenants == {"payments"}  # dev's tenant, nothing of search's
    assert {"Group", "System", "Component"} <= {e["kind"] for e in entities}
    # Read again with the ETag it gave: Berth's 304 is Backstage's NotModifiedError.
    again = read_once(live, "dev", "/api/v1/backstage/catalog-info.yaml", etag=read["etag"])
    assert again["error"].startswith("NotModifiedError"), again
    # Another tenant's catalog is not found, as for any reader of Berth's API.
    other = read_once(live, "dev", "/api/v1/backstage/search/catalog-info.yaml")
    assert other["error"].startswith("NotFoundError"), other
