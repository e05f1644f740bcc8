"""Approval to Ready: how long a person waits after pressing Approve.

    python bench/latency.py [--count 20] [--concurrency 2] [--namespaces 10000]

One request at a time: approved (the approval service the page and the API call), then the
database polled every 5 ms until the request is Ready; the time from the approve call
returning to Ready is one sample. One worker process with `--concurrency` pool slots, as
`make run` starts it. The stack is what the environment says, like bench/provision.py:
PostgreSQL + Redis when DATABASE_URL / REDIS_URL are set, else SQLite and the filesystem
queue (`make run`'s); the demo tenants' GitOps repositories are local bare repositories, as
`make run` has them, so every request ends in a commit. The baseline is the raw official
client applying the same request's objects one after another. Prints p50 and max, the
worker's peak memory and, last, the ratio of the p50 to the baseline; exits 1 when a request
did not become Ready.
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

from common import stack, start_django, tree_peak_rss_mib  # noqa: E402
from provision import (  # noqa: E402
    objects_applied,
    reset_cluster,
    start_sandbox,
    start_workers,
    stop_workers,
    submit,
    unfinished,
)
from raw_client import raw_apply  # noqa: E402


def approve(request_id: int) -> None:
    """What pressing Approve does: the approval service, bound to the digest the approver
    saw on the page (read before the press)."""
    from tenants import services
    from tenants.models import Request, User
    from tenants.selectors import review

    digest = review(Request.objects.select_related("tenant").get(pk=request_id)).digest
    services.approve_request(
        request_id=request_id, approver=User.objects.get(username="pat"), plan_digest=digest
    )


def wait_until_settled(request_id: int, *, timeout: float) -> float:
    """Seconds until the request is Ready or Failed (or the timeout passes)."""
    from tenants.choices import RequestState
    from tenants.models import Request

    started = time.perf_counter()
    settled = (RequestState.READY, RequestState.FAILED)
    while not Request.objects.filter(pk=request_id, state__in=settled).exists():
        if time.perf_counter() - started > timeout:
            break
        time.sleep(0.005)
    return time.perf_counter() - started


def seed_namespaces(count: int) -> None:
    """`count` active namespaces of a tenant of their own on a plan-only cluster: rows the
    worker's queries pass over, none of them the benched tenants'."""
    if not count:
        return
    from tenants.models import Cluster, EnvironmentTier, Namespace, Tenant

    cluster = Cluster.objects.create(
        name="bench-filler", api_url="http://127.0.0.1:9", plan_only=True
    )
    tenant = Tenant.objects.create(slug="filler", name="Rows for the bench")
    tier = EnvironmentTier.objects.get(slug="dev")
    Namespace.objects.bulk_create(
        [
            Namespace(
                name=f"filler-app{index:05d}-dev",
                tenant=tenant,
                tier=tier,
                cluster=cluster,
                cpu_millis=100,
                memory_mib=128,
                state="active",
            )
            for index in range(count)
        ],
        batch_size=2000,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=20)
    parser.add_argument("--concurrency", type=int, default=2, help="the worker's pool size")
    parser.add_argument(
        "--pool", default="", help="the worker's pool (prefork, threads); default: Berth's setting"
    )
    parser.add_argument("--timeout", type=float, default=60, help="per request, seconds")
    parser.add_argument(
        "--namespaces",
        type=int,
        default=0,
        help="active namespaces of "
        "another tenant already in the database (the worker's memory with "
        "many rows)",
    )
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="berth-bench-latency-"))
    start_django(workdir, database="berth_bench_latency")
    sandbox = start_sandbox(workdir)
    try:
        ids = submit(args.count, sandbox)
        # Each tenant's GitOps repository, as `make run` has it: every run ends in a commit.
        from tenants import demo

        demo.seed_git_repos()
        seed_namespaces(args.namespaces)
        # The approvers' e-mails queued at submission are not what a person approving waits
        # for: dropped before the worker starts.
        from portal.celery import app as celery_app

        celery_app.control.purge()
        workers = start_workers(workers=1, concurrency=args.concurrency, pool=args.pool)
        samples = []
        try:
            for request_id in ids:
                approve(request_id)
                samples.append(wait_until_settled(request_id, timeout=args.timeout))
            worker_rss = tree_peak_rss_mib(workers[0].pid)
        finally:
            stop_workers(workers)
        missing = unfinished(ids)
        objects = objects_applied(ids)
        reset_cluster(sandbox)
        raw_seconds = raw_apply(objects, sandbox)[0] / len(ids)
    finally:
        sandbox.process.terminate()
        sandbox.process.wait()

    p50 = statistics.median(samples)
    print(f"requests              {args.count}, one at a time")
    print(f"stack                 {stack()}, 1 worker x {args.concurrency}")
    print(f"not ready             {sum(len(rows) for rows in missing.values())}")
    for state, rows in missing.items():
        print(f"  {state}: {len(rows)}, e.g. {rows[0]}")
    print(
        f"worker peak RSS       {worker_rss:.0f} MiB"
        + (f" ({args.namespaces} other namespaces in the database)" if args.namespaces else "")
    )
    print(f"approve -> Ready      p50 {p50 * 1000:7.0f} ms   max {max(samples) * 1000:7.0f} ms")
    print(
        f"raw apply, 1 request      {raw_seconds * 1000:7.0f} ms  "
        f"({len(objects) // len(ids)} objects, one after another)"
    )
    print(f"ratio p50 / raw       {p50 / raw_seconds:8.2f}")
    if missing:
        sys.exit(1)


if __name__ == "__main__":
    main()
