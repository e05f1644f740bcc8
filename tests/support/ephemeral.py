"""Ephemeral environments' world for the engine's tests: the demo on the stand-in with a
local bare repository, a `shop` project of payments, and dev's API client; and what CI and
the worker do with it."""

from __future__ import annotations

from typing import Any

from rest_framework.test import APIClient

from kubesandbox import KubeSandbox
from provisioning import reconcile
from tenants.choices import RequestState
from tenants.models import Project, Request
from tests.support.prov_world import demo_world_with_repository

WORKER = "ephemeral-test"


def ephemeral_world_on(sandbox: KubeSandbox, tmp_path: Any, settings: Any) -> dict[str, Any]:
    settings.BERTH_GIT_BACKOFF_SECONDS = 0.01
    world = demo_world_with_repository(
        sandbox,
        tmp_path,
        budget_namespaces=60,
        budget_cpu_millis=60 * 500,
        budget_memory_mib=60 * 1024,
    )
    Project.objects.create(tenant=world["tenant"], name="shop", gitops_engine="argocd")
    api = APIClient()
    api.force_authenticate(world["developer"])
    return {**world, "api": api}


def converge(request_id: int) -> Request:
    reconcile.converge(request_id=request_id, worker=WORKER)
    return Request.objects.get(pk=request_id)


def converge_all(kind: str) -> list[Request]:
    """What the worker does with every approved request of this kind."""
    pending = Request.objects.filter(kind=kind, state=RequestState.APPROVED).order_by("pk")
    return [converge(request_id) for request_id in pending.values_list("pk", flat=True)]


def create(api: APIClient, slug: str, *, query: str = "", **extra: str) -> Any:
    """CI's call for the environment `slug` (its branch feature/<slug>)."""
    number = slug.rpartition("-")[2]
    body = {
        "tenant": "payments",
        "project": "shop",
        "env_slug": slug,
        "branch": f"feature/{slug}",
        "mr_id": number if number.isdigit() else "",
        **extra,
    }
    return api.post(f"/api/v1/environments/{query}", body, format="json")


def tenant_namespaces(sandbox: KubeSandbox) -> set[str]:
    return {
        obj["metadata"]["name"]
        for obj in sandbox.objects("Namespace")
        if obj["metadata"]["name"].startswith("payments-shop-")
    }
