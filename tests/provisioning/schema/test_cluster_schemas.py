"""Custom resources are checked against the schemas the target cluster serves
(/openapi/v3/apis/<group>/<version>), as kubectl checks them: no CRD files on Berth's
machine are needed for a cluster Berth applies to; a plan-only cluster uses BERTH_CRD_DIR."""

from __future__ import annotations

import copy
import logging
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from kubesandbox import KubeSandbox
from provisioning.plan import ARGOCD, render
from provisioning.schema import CRD_DIR_ENV, ServedSchemas, served
from provisioning.validation import validate_plan
from tenants.models import Cluster
from tests.support.guardrails import inputs

# Argo CD's two kinds as a cluster might have them installed: small schemas of our own (the
# upstream CRDs are not part of this repository), strict where the test needs it.
ARGO_CRDS = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: appprojects.argoproj.io}
spec:
  group: argoproj.io
  names: {kind: AppProject, plural: appprojects, listKind: AppProjectList}
  scope: Namespaced
  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        required: [metadata, spec]
        properties:
          apiVersion: {type: string}
          kind: {type: string}
          metadata: {type: object}
          spec:
            type: object
            x-kubernetes-preserve-unknown-fields: true
            properties:
              sourceRepos: {type: array, items: {type: string}}
              description: {type: string}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: applications.argoproj.io}
spec:
  group: argoproj.io
  names: {kind: Application, plural: applications, listKind: ApplicationList}
  scope: Namespaced
  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          apiVersion: {type: string}
          kind: {type: string}
          metadata: {type: object}
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
          status: {type: object, x-kubernetes-preserve-unknown-fields: true}
"""
OPENAPI_PATH = "/openapi/v3/apis/argoproj.io/v1alpha1"
OPENAPI_INDEX = "/openapi/v3"  # each document's hash


@pytest.fixture(autouse=True)
def no_crd_directory(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing on this machine to fall back on, unless a test says so."""
    monkeypatch.delenv(CRD_DIR_ENV, raising=False)


@pytest.fixture
def sandbox(tmp_path: Path) -> Iterator[KubeSandbox]:
    crds = tmp_path / "crds" / "argocd.yaml"
    crds.parent.mkdir()
    crds.write_text(ARGO_CRDS)
    with KubeSandbox(crds=[crds.parent]) as running:
        yield running


@pytest.fixture
def cluster(db, sandbox: KubeSandbox) -> Cluster:
    return Cluster.objects.create(
        name="edge", api_url=sandbox.url, auth_method="token", credentials=sandbox.token
    )


def plan_and_inputs(cluster_name: str = "edge") -> tuple:
    """An Argo CD tenant's project plan, its inputs as read from the database (claims set)."""
    given = inputs(ARGOCD)
    given = replace(given, cluster=replace(given.cluster, name=cluster_name), claims={})
    return render(given), given


def with_bad_app_project(plan):
    objects = []
    for obj in plan.apply:
        if obj["kind"] == "AppProject":
            obj = copy.deepcopy(obj)
            obj["spec"]["sourceRepos"] = "https://git.example.com/payments.git"  # not a list
        objects.append(obj)
    return replace(plan, apply=tuple(objects))


def schema_problems(problems: dict[str, list[str]]) -> dict[str, list[str]]:
    return {
        key: [m for m in found if m.startswith("schema:")]
        for key, found in problems.items()
        if any(m.startswith("schema:") for m in found)
    }


def writes(sandbox: KubeSandbox) -> list[dict]:
    return [r for r in sandbox.requests() if r["method"] not in ("GET", "HEAD")]


def test_a_bad_field_of_a_custom_resource_is_refused_with_the_clusters_schema_before_any_apply(
    cluster: Cluster, sandbox: KubeSandbox, caplog: pytest.LogCaptureFixture
) -> None:
    plan, given = plan_and_inputs()
    caplog.set_level(logging.INFO, logger="provisioning.schema.served")
    problems = schema_problems(validate_plan(with_bad_app_project(plan), given))
    assert problems == {
        "AppProject/argocd/payments": ["schema: spec.sourceRepos: expected array, got string"]
    }
    assert writes(sandbox) == []  # refused before anything was applied
    assert sandbox.objects("AppProject", "argocd") == []
    assert any(
        "schemas cluster edge serves" in r.getMessage() and OPENAPI_PATH in r.getMessage()
        for r in caplog.records
    )


def test_the_rendered_plan_passes_the_clusters_schema(cluster: Cluster) -> None:
    plan, given = plan_and_inputs()
    assert schema_problems(validate_plan(plan, given)) == {}


def test_a_kind_the_cluster_does_not_have_is_refused_naming_the_cluster(db, tmp_path: Path) -> None:
    only_applications = tmp_path / "applications.yaml"
    only_applications.write_text(ARGO_CRDS.split("---\n")[1])
    with KubeSandbox(crds=[only_applications]) as partial:
        Cluster.objects.create(
            name="edge", api_url=partial.url, auth_method="token", credentials=partial.token
        )
        plan, given = plan_and_inputs()
        problems = schema_problems(validate_plan(plan, given))
    assert problems == {
        "AppProject/argocd/payments": [
            "schema: kind: unknown kind: cluster edge serves no AppProject in argoproj.io/v1alpha1 "
            "(served: Application)"
        ]
    }


def test_the_schemas_are_fetched_once_per_cluster_and_group_version(
    cluster: Cluster, sandbox: KubeSandbox
) -> None:
    plan, given = plan_and_inputs()
    served.forget(hashes=True)  # as a process starts
    sandbox.clear_requests()
    for _ in range(3):
        validate_plan(with_bad_app_project(plan), given)
    fetched = [r for r in sandbox.requests() if r["path"].startswith("/openapi/")]
    assert [r["path"] for r in fetched] == [OPENAPI_INDEX, OPENAPI_PATH]


def test_a_document_asked_for_again_is_fetched_only_when_its_hash_changed(
    cluster: Cluster, sandbox: KubeSandbox
) -> None:
    """Once old (or forgotten), the cluster's index is asked: a document of the same hash is
    not fetched and parsed again; an upgraded CRD changes the hash and is."""
    plan, given = plan_and_inputs()
    assert schema_problems(validate_plan(with_bad_app_project(plan), given))
    served.forget()
    sandbox.clear_requests()
    assert schema_problems(validate_plan(with_bad_app_project(plan), given))
    assert [r["path"] for r in sandbox.requests() if r["path"].startswith("/openapi/")] == [
        OPENAPI_INDEX
    ]

    upgraded = sandbox.get("CustomResourceDefinition", "appprojects.argoproj.io")
    schema = upgraded["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    schema["properties"]["spec"]["properties"]["sourceRepos"] = {
        "x-kubernetes-int-or-string": True  # a string is taken now
    }
    sandbox.upsert(upgraded)
    served.forget()
    sandbox.clear_requests()
    assert schema_problems(validate_plan(with_bad_app_project(plan), given)) == {}
    assert [r["path"] for r in sandbox.requests() if r["path"].startswith("/openapi/")] == [
        OPENAPI_INDEX,
        OPENAPI_PATH,
    ]


def test_a_second_cluster_is_asked_for_its_own_schemas(
    cluster: Cluster, sandbox: KubeSandbox, tmp_path: Path
) -> None:
    """Another cluster without Argo CD's CRDs: nothing to check against there (no
    BERTH_CRD_DIR either), where the first cluster's schema refuses the same plan."""
    with KubeSandbox() as bare:
        Cluster.objects.create(
            name="bare", api_url=bare.url, auth_method="token", credentials=bare.token
        )
        plan, given = plan_and_inputs()
        assert schema_problems(validate_plan(with_bad_app_project(plan), given))
        plan, given = plan_and_inputs("bare")
        assert schema_problems(validate_plan(with_bad_app_project(plan), given)) == {}
        assert [r["path"] for r in bare.requests() if r["path"].startswith("/openapi/")] == [
            OPENAPI_INDEX,
            OPENAPI_PATH,
        ]


def test_a_fetched_schema_is_asked_for_again_once_it_is_old() -> None:
    now = [0.0]
    asked = []

    def fetch(group: str, version: str) -> None:
        asked.append((group, version))

    schemas = ServedSchemas("edge", fetch, ttl=60, clock=lambda: now[0])
    assert schemas.kinds("argoproj.io", "v1alpha1") is None
    now[0] = 59
    schemas.kinds("argoproj.io", "v1alpha1")
    assert asked == [("argoproj.io", "v1alpha1")]
    now[0] = 61
    schemas.kinds("argoproj.io", "v1alpha1")
    assert asked == [("argoproj.io", "v1alpha1")] * 2


def test_a_plan_only_cluster_is_checked_against_the_crd_directory(
    db, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sandbox: KubeSandbox
) -> None:
    monkeypatch.setenv(CRD_DIR_ENV, str(tmp_path / "crds"))  # the files the sandbox got
    Cluster.objects.create(
        name="edge",
        api_url=sandbox.url,
        auth_method="token",
        credentials=sandbox.token,
        plan_only=True,
    )
    plan, given = plan_and_inputs()
    problems = schema_problems(validate_plan(with_bad_app_project(plan), given))
    assert problems == {
        "AppProject/argocd/payments": ["schema: spec.sourceRepos: expected array, got string"]
    }
    assert [r for r in sandbox.requests() if r["path"].startswith("/openapi/")] == []


def test_a_cluster_that_serves_no_such_group_falls_back_to_the_crd_directory(
    db, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "argocd.yaml").write_text(ARGO_CRDS)
    monkeypatch.setenv(CRD_DIR_ENV, str(tmp_path))
    with KubeSandbox() as bare:
        Cluster.objects.create(
            name="edge", api_url=bare.url, auth_method="token", credentials=bare.token
        )
        plan, given = plan_and_inputs()
        problems = schema_problems(validate_plan(with_bad_app_project(plan), given))
    assert problems == {
        "AppProject/argocd/payments": ["schema: spec.sourceRepos: expected array, got string"]
    }
