"""Ephemeral environments: how fast CI gets its answer, and how long beat's expiry job takes.

    python bench/ephemeral.py [--count 500]

Creates N ephemeral environments through the same service the API calls (rules, budget
under the tenant lock, policy, claims), then moves the clock past their expiry and runs the
expiry job once, as beat would (the environments are marked live in between: the workers'
part is not measured here). Prints the admission latency (p50 / p99), the job's wall
time and its database queries per environment. Provisioning is not part of it (see
bench/provision.py); the end requests the job opens are queued on a scratch queue nobody
consumes. Uses DATABASE_URL / REDIS_URL like bench/provision.py. Prints, last, the ratio of
admission to writing the same rows with nothing checked; exits 1 when an environment was
not ended.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=500)
    args = parser.parse_args()

    from common import start_django

    start_django(
        Path(tempfile.mkdtemp(prefix="berth-bench-ephemeral-")), database="berth_bench_ephemeral"
    )
    import time_machine
    from django.db import connection
    from django.utils import timezone

    from tenants import demo, services
    from tenants.choices import EnvironmentState, NamespaceState, RequestState
    from tenants.models import EphemeralEnvironment, Namespace, Project, Request, Tenant, User

    demo.seed(sandbox_api_url="http://127.0.0.1:9")
    tenant = Tenant.objects.get(slug="payments")
    tenant.budget_namespaces = args.count + 10
    tenant.budget_cpu_millis = tenant.budget_memory_mib = (args.count + 10) * 1024
    tenant.save()
    Project.objects.create(tenant=tenant, name="shop")
    developer = User.objects.get(username="dev")

    latencies = []
    for number in range(args.count):
        started = time.perf_counter()
        services.submit_request(
            tenant=tenant,
            kind="ephemeral",
            requester=developer,
            payload={"project": "shop", "env_slug": f"review-{number}", "ttl": "1m"},
        )
        latencies.append(time.perf_counter() - started)
    latencies.sort()
    plain = plain_inserts(args.count, tenant, developer)
    # What the workers would have done: every environment provisioned and live.
    Namespace.objects.filter(tenant=tenant).update(state=NamespaceState.ACTIVE)
    Request.objects.filter(kind="ephemeral").update(state=RequestState.READY)
    EphemeralEnvironment.objects.update(state=EnvironmentState.LIVE)

    queries = []

    def count(execute, sql, params, many, context):
        queries.append(sql)
        return execute(sql, params, many, context)

    later = timezone.now() + timedelta(minutes=2)
    with time_machine.travel(later), connection.execute_wrapper(count):
        started = time.perf_counter()
        ended = services.expire_environments()
        wall = time.perf_counter() - started

    print(f"{args.count} ephemeral environments ({connection.vendor})")
    print(
        f"  admission  p50 {statistics.median(latencies) * 1000:.1f} ms   "
        f"p99 {latencies[int(len(latencies) * 0.99) - 1] * 1000:.1f} ms"
    )
    print(
        f"  expiry job {len(ended)} ended in {wall:.2f} s "
        f"({wall / max(len(ended), 1) * 1000:.1f} ms each, "
        f"{len(queries) / max(len(ended), 1):.1f} queries each)"
    )
    lost = args.count - len(ended)
    print(f"  not ended  {lost}")
    print(
        f"  plain rows p50 {statistics.median(plain) * 1000:.1f} ms (a request and its "
        "namespace inserted, no rules, budget, policy or claims)"
    )
    print(
        f"ratio admission / plain rows  p50 "
        f"{statistics.median(latencies) / statistics.median(plain):.2f}"
    )
    if lost:
        sys.exit(1)


def plain_inserts(count: int, tenant, developer) -> list[float]:
    """The baseline: the rows an environment needs, written with nothing checked, in a
    transaction each (as admission's are)."""
    from django.db import transaction

    from tenants.choices import NamespaceState
    from tenants.models import EnvironmentTier, Namespace, Request

    tier = EnvironmentTier.objects.filter(is_ephemeral=True).first()
    cluster = tenant.allowed_clusters.first()
    latencies = []
    for number in range(count):
        started = time.perf_counter()
        with transaction.atomic():
            created = Request.objects.create(
                tenant=tenant,
                kind="ephemeral",
                requester=developer,
                payload={"project": "shop", "env_slug": f"plain-{number}", "ttl": "1m"},
            )
            Namespace.objects.create(
                name=f"payments-plain-{number}",
                tenant=tenant,
                tier=tier,
                cluster=cluster,
                cpu_millis=100,
                memory_mib=128,
                request=created,
                state=NamespaceState.REQUESTED,
            )
        latencies.append(time.perf_counter() - started)
    # Gone again before the expiry job runs: they are not environments.
    Namespace.objects.filter(name__startswith="payments-plain-").delete()
    Request.objects.filter(payload__env_slug__startswith="plain-").delete()
    return latencies


if __name__ == "__main__":
    main()
