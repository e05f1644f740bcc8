"""REST API latency: listing 50 of 10,000 requests, and 50 of 1,000,000 audit events,
through the API against a bare Django view returning the same 50 rows, all served by the
same gunicorn in the same run.

    python bench/api.py [--rows 10000] [--audit-events 1000000] [--clients 32]
                        [--per-client 100] [--workers 4]

- API:   GET /api/v1/requests/?page_size=50 with a platform admin's API token (token
  lookup, scope check, throttle counter in the cache, tenant-scoped selector, the
  dashboard's filterset, ordering, page-number pagination with its COUNT, serializers).
- plain: GET /bench/plain/requests/, a JsonResponse of the same 50 rows and fields, no
  authentication: a view in this file's own URLconf, not in the product.
- audit: GET /api/v1/audit-events/?page_size=50 (the newest page), and audit deep: the page
  at a cursor halfway down the log, both by cursor (no COUNT), against audit plain:
  GET /bench/plain/audit/, the newest 50 events as a bare JsonResponse. The events are
  written by one INSERT … SELECT, a second apart, over the demo's tenants.

The server is gunicorn (sync workers, `--workers`) started as its own process with this
file as its settings module (DJANGO_SETTINGS_MODULE=bench.api: Berth's settings plus the
plain view's URL). Uses a scratch database `berth_bench_api_<pid>` beside DATABASE_URL's on
PostgreSQL when DATABASE_URL is set (else SQLite in a temporary directory), and REDIS_URL
for the cache (throttle counters) when set. `--clients` threads each send `--per-client`
requests per round; two rounds alternate the endpoints. Prints p50 / p99 and, last, the
ratios, after each web worker's peak RSS; exits 1 when a response is not 200 (timings are
never asserted).
"""

from __future__ import annotations

import os
import sys

# --- as a settings module (the gunicorn server) ----------------------------------------------
if os.environ.get("BERTH_BENCH_SERVER") == "1":
    from portal.settings import *  # noqa: F403

    ROOT_URLCONF = "bench.api"


def __getattr__(name: str):
    if name == "urlpatterns":
        from django.urls import include, path

        return [
            path("bench/plain/requests/", plain_requests),
            path("bench/plain/audit/", plain_audit),
            path("", include("portal.urls")),
        ]
    raise AttributeError(name)


def plain_requests(request):
    """The same 50 rows the API's first page has, as a bare JsonResponse."""
    from django.http import JsonResponse

    from tenants.models import Request

    rows = Request.objects.select_related("tenant", "requester").order_by("-created_at", "-id")
    return JsonResponse(
        {
            "results": [
                {
                    "id": row.pk,
                    "tenant": row.tenant.slug,
                    "kind": row.kind,
                    "state": row.state,
                    "state_label": row.get_state_display(),
                    "status_message": row.status_message,
                    "payload": row.payload,
                    "requester": row.requester.username,
                    "policy_rule": row.policy_rule,
                    "approvals_required": row.approvals_required,
                    "approver_role": row.approver_role,
                    "waiting_since": _timestamp(row.waiting_since),
                    "next_try_at": _timestamp(row.next_try_at),
                    "wait_reason": row.wait_reason,
                    "conditions": row.conditions,
                    "created_at": row.created_at.isoformat().replace("+00:00", "Z"),
                    "updated_at": row.updated_at.isoformat().replace("+00:00", "Z"),
                }
                for row in rows[:50]
            ]
        }
    )


def plain_audit(request):
    """The newest 50 audit events, the audit list's first page, as a bare JsonResponse."""
    from django.http import JsonResponse

    from tenants.models import AuditEvent

    rows = AuditEvent.objects.select_related("tenant").order_by("-created_at", "-id")
    return JsonResponse(
        {
            "results": [
                {
                    "id": row.pk,
                    "created_at": _timestamp(row.created_at),
                    "actor": row.actor_label,
                    "action": row.action,
                    "object_type": row.object_type,
                    "object_id": row.object_id,
                    "object_repr": row.object_repr,
                    "tenant": row.tenant.slug if row.tenant else None,
                    "before": row.before,
                    "after": row.after,
                    "source_ip": row.source_ip,
                }
                for row in rows[:50]
            ]
        }
    )


def _timestamp(value):
    return None if value is None else value.isoformat().replace("+00:00", "Z")


# --- as a script (the driver) ----------------------------------------------------------------
def main() -> None:
    import argparse
    import signal
    import socket
    import statistics
    import subprocess
    import tempfile
    import threading
    import time
    from pathlib import Path

    import requests

    root = Path(__file__).resolve().parent.parent
    sys.path.insert(0, str(root))

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--audit-events", type=int, default=1_000_000)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--per-client", type=int, default=100)
    parser.add_argument("--workers", type=int, default=4)
    args = parser.parse_args()
    if args.audit_events < 100:
        parser.error("--audit-events: at least 100 (a first page and one halfway down)")

    sys.path.insert(0, str(root / "bench"))
    from common import (
        peak_rss_mib,
        seed_audit_events,
        seed_namespace_requests,
        stack,
        start_django,
        tree_pids,
    )

    workdir = Path(tempfile.mkdtemp(prefix="berth-bench-api-"))
    start_django(
        workdir,
        database="berth_bench_api",
        BERTH_API_RATE="100000000/min",
        ALLOWED_HOSTS="127.0.0.1",
    )
    database = stack().split(",")[0]

    from tenants import demo, services
    from tenants.models import User

    demo.seed(sandbox_api_url="http://127.0.0.1:9")
    seed_namespace_requests(
        args.rows, states=("submitted", "approved", "ready", "rejected"), prefix="bench"
    )
    started = time.perf_counter()
    seed_audit_events(args.audit_events)
    print(f"seeded {args.audit_events} audit events in {time.perf_counter() - started:.1f} s")
    from tenants.models import AuditEvent
    from tenants.selectors import AuditCursor

    halfway = AuditEvent.objects.order_by("-created_at", "-id")[args.audit_events // 2]
    deep_cursor = AuditCursor.at(halfway, forward=True).encode()
    token = services.create_api_token(
        user=User.objects.get(username="pat"), name="bench", scopes=["read"]
    )[1]
    from django.db import connections

    connections.close_all()

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(  # noqa: S603 - fixed argv
        [
            sys.executable,
            "-m",
            "gunicorn",
            "portal.wsgi:application",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            str(args.workers),
            "--log-level",
            "warning",
        ],
        cwd=root,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "bench.api", "BERTH_BENCH_SERVER": "1"},
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if requests.get(f"{base}/healthz", timeout=30).status_code == 200:
                    break
            except requests.ConnectionError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("gunicorn did not start")
            time.sleep(0.2)

        endpoints = {
            "API": (
                f"{base}/api/v1/requests/",
                {"page_size": "50"},
                {"Authorization": f"Bearer {token}"},
            ),
            "plain": (f"{base}/bench/plain/requests/", {}, {}),
            "audit": (
                f"{base}/api/v1/audit-events/",
                {"page_size": "50"},
                {"Authorization": f"Bearer {token}"},
            ),
            "audit deep": (
                f"{base}/api/v1/audit-events/",
                {"page_size": "50", "cursor": deep_cursor},
                {"Authorization": f"Bearer {token}"},
            ),
            "audit plain": (f"{base}/bench/plain/audit/", {}, {}),
        }
        first = requests.get(
            endpoints["API"][0], params=endpoints["API"][1], headers=endpoints["API"][2], timeout=30
        )
        plain = requests.get(endpoints["plain"][0], timeout=30).json()["results"]
        page = first.json()
        assert first.status_code == 200 and len(page["results"]) == 50, first.text[:300]
        assert [r["id"] for r in page["results"]] == [r["id"] for r in plain]
        assert page["results"][0] == {**plain[0]}, (page["results"][0], plain[0])
        audit = requests.get(
            endpoints["audit"][0],
            params=endpoints["audit"][1],
            headers=endpoints["audit"][2],
            timeout=30,
        ).json()
        audit_plain = requests.get(endpoints["audit plain"][0], timeout=30).json()["results"]
        assert audit["results"] == audit_plain, (audit["results"][:1], audit_plain[:1])
        assert "count" not in audit and len(audit["results"]) == 50, audit.keys()

        def load(name: str, per_client: int, clients: int = args.clients) -> list[float]:
            url, params, headers = endpoints[name]
            latencies: list[float] = []
            lock = threading.Lock()
            errors: list[str] = []

            def client() -> None:
                session = requests.Session()
                mine = []
                for _ in range(per_client):
                    started = time.perf_counter()
                    response = session.get(url, params=params, headers=headers, timeout=60)
                    mine.append(time.perf_counter() - started)
                    if response.status_code != 200:
                        errors.append(f"{name}: HTTP {response.status_code}")
                with lock:
                    latencies.extend(mine)

            threads = [threading.Thread(target=client) for _ in range(clients)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            if errors:
                raise SystemExit(f"{len(errors)} errors, e.g. {errors[0]}")
            return latencies

        # Warm every worker's connections and caches. A sync worker serves one connection at a
        # time and closes it, so as many clients as workers, at once, reach every worker:
        # one client's few calls could leave a worker cold, its first call (~150 ms) then
        # timed.
        for name in endpoints:
            load(name, 5, clients=max(args.clients, args.workers))
        results: dict[str, list[float]] = {name: [] for name in endpoints}
        walls: dict[str, float] = {name: 0.0 for name in endpoints}
        for round_ in range(2):
            for name in endpoints if round_ == 0 else reversed(list(endpoints)):
                started = time.perf_counter()
                results[name] += load(name, args.per_client // 2)
                walls[name] += time.perf_counter() - started

        # Each gunicorn worker is one web process: its own high-water mark after the load.
        web_rss = [peak_rss_mib(pid) for pid in tree_pids(server.pid) if pid != server.pid]

        def percentile(values: list[float], fraction: float) -> float:
            ordered = sorted(values)
            return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]

        print(
            f"bench/api.py: {args.rows} requests and {args.audit_events} audit events in "
            f"{database}, cache "
            f"{'Redis' if os.environ.get('REDIS_URL') else 'per-process memory'}, "
            f"gunicorn {args.workers} sync workers, {args.clients} concurrent clients, "
            f"{len(results['API'])} requests per endpoint"
        )
        figures = {}
        for name, values in results.items():
            p50, p99 = percentile(values, 0.50), percentile(values, 0.99)
            figures[name] = (p50, p99)
            print(
                f"  {name:11}  p50 {p50 * 1000:7.1f} ms   p99 {p99 * 1000:7.1f} ms   "
                f"mean {statistics.mean(values) * 1000:7.1f} ms   "
                f"{len(values) / walls[name]:6.0f} req/s"
            )
        print(
            f"  web peak RSS per gunicorn worker: {max(web_rss):.0f} MiB "
            f"({', '.join(f'{rss:.0f}' for rss in sorted(web_rss))})"
        )
        for name in ("audit", "audit deep"):
            print(
                f"  ratio {name}/audit plain: p50 "
                f"{figures[name][0] / figures['audit plain'][0]:.2f}x, "
                f"p99 {figures[name][1] / figures['audit plain'][1]:.2f}x"
            )
        print(
            f"  ratio API/plain: p50 {figures['API'][0] / figures['plain'][0]:.2f}x, "
            f"p99 {figures['API'][1] / figures['plain'][1]:.2f}x"
        )
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=30)


if __name__ == "__main__":
    main()
