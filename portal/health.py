"""Liveness and readiness endpoints for load balancers and Kubernetes probes."""

from __future__ import annotations

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from portal.celery import app as celery_app


@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """The process is up and serving; says nothing about its dependencies."""
    return JsonResponse({"status": "ok"})


def _check_database() -> str | None:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def _check_broker() -> str | None:
    try:
        with celery_app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def _check_watcher() -> str | None:
    """Every cluster Berth applies to has a watcher that beat within its lease."""
    from provisioning.jobs.watch_lock import watched_clusters
    from tenants.models import Cluster

    try:
        unwatched = sorted(
            Cluster.objects.filter(plan_only=False)
            .exclude(pk__in=watched_clusters())
            .values_list("name", flat=True)
        )
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    if unwatched:
        return (
            "no watcher has beaten within its lease for "
            + ", ".join(unwatched)
            + " (drift there waits for beat's reconcile)"
        )
    return None


@never_cache
@require_GET
def readyz(request: HttpRequest) -> JsonResponse:
    """200 when the database and the broker answer and every cluster Berth applies to has a
    watcher that beat within its lease; 503 naming what failed otherwise. With
    BERTH_READYZ_REQUIRES_WATCHER off the watcher is reported and not required (a
    deployment that runs no watcher, on purpose)."""
    checks = {"database": _check_database(), "broker": _check_broker()}
    watcher = _check_watcher() if checks["database"] is None else "database unavailable"
    if settings.BERTH_READYZ_REQUIRES_WATCHER:
        checks["watcher"] = watcher
    ready = all(error is None for error in checks.values())
    body = {
        "status": "ready" if ready else "unavailable",
        "checks": {
            name: {"ok": error is None, **({"error": error} if error else {})}
            for name, error in checks.items()
        },
        "watcher": {"ok": watcher is None, **({"error": watcher} if watcher else {})},
    }
    return JsonResponse(body, status=200 if ready else 503)
