"""Pages at size: what the platform admins' pages cost once Berth holds 10,000 namespaces
(50 tenants), 100,000 requests and 1,000,000 audit events.

    python bench/pages.py [--namespaces 10000] [--requests 100000] [--audit-events 1000000]
                          [--tenants 50] [--times 20]

The rows are written straight into the database (no cluster, no git: the pages read only
the database), then each page is asked for `--times` times by a signed-in platform admin
through Django's test client (the whole view, template and middleware, no HTTP socket).
Prints per page its first answer's time, then p50 / p99, its queries and its size; for the
two lists that read one table (the audit log, the names registry) the bare query of the
same rows beside it. Showback at that size: every namespace Ready 80 days ago (one in ten's
quota raised and every namespace repriced in the month before last), the last two months
closed; the costs page and the FOCUS export of this month (worked out from the history), of
last month and of the repriced one (their rows). Uses a
scratch database `berth_bench_pages_<pid>` beside DATABASE_URL's on PostgreSQL when set (else
SQLite in a temporary directory). Exits 1 when a page does not answer 200; timings are
never asserted. Last line: the ratio of the audit page's p50 to its bare query's.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--namespaces", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=100_000)
    parser.add_argument("--audit-events", type=int, default=1_000_000)
    parser.add_argument("--tenants", type=int, default=50)
    parser.add_argument("--times", type=int, default=20)
    args = parser.parse_args()
    if args.tenants < 2 or args.namespaces < args.tenants or args.audit_events < 200:
        parser.error("at least 2 tenants, a namespace per tenant and 200 audit events")
    if args.namespaces > args.requests * 6 // 8:
        parser.error("a namespace is a ready request: at most 6 in 8 of --requests")

    from common import seed_audit_events, stack, start_django

    workdir = Path(tempfile.mkdtemp(prefix="berth-bench-pages-"))
    start_django(workdir, database="berth_bench_pages", ALLOWED_HOSTS="testserver")
    started = time.perf_counter()
    seed(args)
    seed_audit_events(args.audit_events)
    seeded = time.perf_counter() - started
    print(
        f"bench/pages.py: {args.namespaces} namespaces in {args.tenants} tenants, "
        f"{args.requests} requests, {args.audit_events} audit events, {stack()}; "
        f"seeded in {seeded:.0f} s"
    )
    measure(args)


def seed(args) -> None:
    from common import seed_namespace_requests
    from django.utils import timezone

    from tenants import demo
    from tenants.choices import NamePurpose, NamespaceState
    from tenants.models import (
        Cluster,
        EnvironmentTier,
        Namespace,
        NamespaceClaim,
        Tenant,
        TruthTable,
    )

    demo.seed(sandbox_api_url="http://127.0.0.1:9")
    cluster = Cluster.objects.get(name="sandbox")
    dev = EnvironmentTier.objects.get(slug="dev")
    Tenant.objects.bulk_create(
        Tenant(slug=f"team{index:02d}", name=f"Team {index:02d}")
        for index in range(args.tenants - Tenant.objects.count())
    )
    tenants = list(Tenant.objects.order_by("pk"))
    # One in eight waits for a person: the approval queue holds 12,500.
    requests = seed_namespace_requests(
        args.requests, states=("submitted", *["ready"] * 6, "rejected"), prefix="app"
    )
    ready = [request for request in requests if request.state == "ready"]
    namespaces = Namespace.objects.bulk_create(
        (
            Namespace(
                name=f"{ready[index].tenant.slug}-app{index:05d}-dev",
                tenant=ready[index].tenant,
                tier=dev,
                cluster=cluster,
                cpu_millis=100,
                memory_mib=128,
                state=NamespaceState.ACTIVE,
                request=ready[index],
            )
            for index in range(args.namespaces)
        ),
        batch_size=2000,
    )
    NamespaceClaim.objects.bulk_create(
        (
            NamespaceClaim(
                cluster=cluster,
                name=namespace.name,
                purpose=NamePurpose.TIER,
                tenant=namespace.tenant,
                app=namespace.name.split("-")[1],
                tier="dev",
                namespace=namespace,
            )
            for namespace in namespaces
        ),
        batch_size=2000,
    )
    seed_showback(namespaces, cluster)
    # The truth table of the first tenant as beat leaves it: its namespaces' fifteen objects
    # each, all in sync.
    first = tenants[0]
    rows = [
        {
            "source": "cluster",
            "cluster": "sandbox",
            "object": f"{kind}/{namespace.name}/berth-{kind.lower()}",
            "state": "in_sync",
            "namespace": namespace.name,
            "detail": "",
            "db": "plan 0123456789ab",
            "git": "",
            "live": "present, Berth's fields",
            "engine": "",
        }
        for namespace in namespaces
        if namespace.tenant_id == first.pk
        for kind in KINDS
    ]
    TruthTable.objects.create(
        tenant=first, taken_at=timezone.now(), rows=rows, counts={"in_sync": len(rows)}
    )


def seed_showback(namespaces, cluster) -> None:
    """Showback's history as months of work leave it: prices since always, every namespace
    Ready 80 days ago; in the month before last a price change on the 10th (every namespace
    repriced mid-month) and one in ten's quota raised on the 15th; that month and the last
    closed into their rows."""
    from datetime import timedelta
    from decimal import Decimal

    from django.utils import timezone

    from tenants.choices import AllocationChange
    from tenants.models import Allocation, ClusterPrice
    from tenants.selectors.charges import midnight, month_start, previous_month
    from tenants.services import close_month
    from tenants.services.prices import SINCE_ALWAYS

    now = timezone.now()
    last_month = previous_month(month_start(timezone.localdate(now)))
    repriced_month = previous_month(last_month)
    tenth = midnight(repriced_month.replace(day=10))
    halfway = tenth + timedelta(days=5)
    prices = {"storage_gib_month": Decimal("0.10"), "namespace_month": Decimal("7.30")}
    ClusterPrice.objects.create(
        cluster=cluster, effective_from=SINCE_ALWAYS, cpu_core_hour=Decimal("0.04"), **prices
    )
    ClusterPrice.objects.create(
        cluster=cluster, effective_from=tenth, cpu_core_hour=Decimal("0.05"), **prices
    )
    ready = now - timedelta(days=80)
    rows = []
    for index, namespace in enumerate(namespaces):
        held = {"namespace": namespace, "tenant_id": namespace.tenant_id, "cluster": cluster}
        held |= {"storage_gib": 0, "started_at": ready, "started_by": AllocationChange.READY}
        if index % 10:  # held as made
            rows.append(Allocation(**held, cpu_millis=100, memory_mib=128))
            continue
        ended = {"ended_at": halfway, "ended_by": AllocationChange.QUOTA}
        raised = {"started_at": halfway, "started_by": AllocationChange.QUOTA}
        rows.append(Allocation(**held, **ended, cpu_millis=100, memory_mib=128))
        rows.append(Allocation(**(held | raised), cpu_millis=400, memory_mib=512))
    Allocation.objects.bulk_create(rows, batch_size=2000)
    close_month(repriced_month)
    close_month(last_month)


KINDS = (
    "Namespace",
    "ResourceQuota",
    "LimitRange",
    "Role",
    "RoleBinding",
    "ServiceAccount",
    "NetworkPolicy",
    "NetworkPolicy2",
    "NetworkPolicy3",
    "RoleBinding2",
    "RoleBinding3",
    "ConfigMap",
    "Secret",
    "Application",
    "AppProject",
)


def measure(args) -> None:
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from django.utils import timezone

    from tenants.models import AuditEvent, Namespace, Tenant, User
    from tenants.selectors import AuditCursor
    from tenants.selectors.charges import month_start, previous_month
    from tenants.selectors.names import NameCursor, claims_visible_to_admin

    this_month = f"{timezone.localdate():%Y-%m}"
    last_month = previous_month(month_start(timezone.localdate()))
    repriced_month = f"{previous_month(last_month):%Y-%m}"
    last_month = f"{last_month:%Y-%m}"
    client = Client()
    client.force_login(User.objects.get(username="pat"))
    first = Tenant.objects.order_by("pk").first()
    halfway = AuditEvent.objects.order_by("-created_at", "-id")[args.audit_events // 2]
    some_namespace = Namespace.objects.filter(tenant=first).first()
    names = claims_visible_to_admin()
    halfway_name = NameCursor.at(names[names.count() // 2], forward=True).encode()
    pages = {
        "dashboard": "/dashboard/",
        "approval queue": "/approvals/",
        "approval queue p.100": "/approvals/?page=100",
        "audit log": "/audit/",
        "audit log halfway": f"/audit/?cursor={AuditCursor.at(halfway, forward=True).encode()}",
        "audit, one tenant": f"/audit/?tenant={first.slug}",
        "names registry": "/names/",
        "names halfway": f"/names/?cursor={halfway_name}",
        "access map": "/access/",
        "access, a namespace": f"/access/namespaces/{some_namespace.name}/",
        "truth table": f"/tenants/{first.slug}/truth/",
        "tenant page": f"/tenants/{first.slug}/",
        "costs, this month": "/costs/",
        "costs, closed month": f"/costs/?month={last_month}",
        "FOCUS, this month": f"/api/v1/costs/focus/?month={this_month}&format=csv",
        "FOCUS, closed month": f"/api/v1/costs/focus/?month={last_month}&format=csv",
        "FOCUS, repriced month": f"/api/v1/costs/focus/?month={repriced_month}&format=csv",
    }
    bare = {
        "audit log": lambda: list(
            AuditEvent.objects.select_related("tenant").order_by("-created_at", "-id")[:100]
        ),
        "names registry": lambda: list(claims_visible_to_admin()[:100]),
    }
    figures = {}
    print(
        f"{'page':22} {'first':>9} {'p50':>9} {'p99':>9} {'queries':>8} {'KiB':>7}   bare query p50"
    )
    for name, path in pages.items():
        # The first answer: templates compiled, the session read, the dashboard's days read
        # (after it, they come from the cache).
        started = time.perf_counter()
        body_of(client.get(path))
        first = time.perf_counter() - started
        times, queries, size = [], 0, 0
        for _ in range(args.times):
            with CaptureQueriesContext(connection) as captured:
                started = time.perf_counter()
                response = client.get(path)
                body = body_of(response)  # a streamed answer: until its last byte
                times.append(time.perf_counter() - started)
            if response.status_code != 200:
                raise SystemExit(f"{name}: {path} answered {response.status_code}")
            queries, size = len(captured), len(body)
        p50 = statistics.median(times)
        figures[name] = p50
        line = (
            f"{name:22} {first * 1000:7.1f}ms {p50 * 1000:7.1f}ms "
            f"{percentile(times, 0.99) * 1000:7.1f}ms "
            f"{queries:8d} {size / 1024:7.0f}"
        )
        if name in bare:
            bare_times = []
            for _ in range(args.times):
                started = time.perf_counter()
                bare[name]()
                bare_times.append(time.perf_counter() - started)
            figures[f"{name} bare"] = statistics.median(bare_times)
            line += f"   {figures[f'{name} bare'] * 1000:.1f} ms"
        print(line)

    # The export: how soon the first thousand lines of a million come, and how fast the rest.
    started = time.perf_counter()
    response = client.get("/audit/", {"format": "csv"})
    lines = 0
    first_thousand = 0.0
    for chunk in response.streaming_content:
        lines += chunk.count(b"\n")
        if not first_thousand and lines >= 1000:
            first_thousand = time.perf_counter() - started
    whole = time.perf_counter() - started
    print(
        f"audit export (CSV): first 1,000 lines after {first_thousand * 1000:.0f} ms; "
        f"all {lines - 1} events in {whole:.1f} s ({(lines - 1) / whole:.0f} a second)"
    )
    print(
        f"ratio audit page / its bare query p50: "
        f"{figures['audit log'] / figures['audit log bare']:.2f}"
    )


def body_of(response) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]


if __name__ == "__main__":
    main()
