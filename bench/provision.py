"""Provisioning throughput: N namespace requests approved in bulk, provisioned by Celery
workers, against a raw script applying the same objects with the official client.

    python bench/provision.py [--count 500] [--workers 2] [--concurrency 2]

Uses DATABASE_URL (a scratch database `berth_bench_<pid>` on the same PostgreSQL server) and
REDIS_URL when set, else SQLite and the filesystem broker in a temporary directory. The
Kubernetes API is the sandbox stand-in as `make run` starts it (HTTPS, Berth signed in
with the chart's RBAC), its own process. The bench's own first approval rule makes every
request wait for a person, whatever the demo's rules auto-approve; all are then approved
together, as a platform admin does in the approval queue, and the clock runs from the
first approval. The baseline runs before and after (this machine's speed drifts over
minutes): their mean is compared. Prints wall times, the workers' peak memory and, last,
the ratio; exits 1 when a request failed or did not finish (timings are never asserted).
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from common import (  # noqa: E402
    cpu_seconds,
    machine_busy_seconds,
    processes_cpu_seconds,
    stack,
    start_django,
    tree_cpu_seconds,
    tree_peak_rss_mib,
)
from raw_client import parallel_raw_apply, raw_apply  # noqa: E402


@dataclass(frozen=True)
class Sandbox:
    process: subprocess.Popen
    url: str
    token: str
    ca_certificate: str
    kubeconfig: Path


def start_sandbox(workdir: Path) -> Sandbox:
    """The stand-in as `make run` starts it (HTTPS, the chart's RBAC for Berth, the CRDs),
    its own process, in memory: every run starts from an empty cluster."""
    from portal import sandbox

    token = secrets.token_urlsafe(32)
    prepared = sandbox.prepare(data_dir=workdir, berth_namespace="berth-system", berth_token=token)
    command = sandbox.sandbox_command(port="0", prepared=prepared)
    state = command.index("--state-file")
    del command[state : state + 2]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)  # noqa: S603 - our own command line
    url = process.stdout.readline().split()[-1]
    kubeconfig = Path(prepared["kubeconfig"])
    while not kubeconfig.exists():
        time.sleep(0.1)
    return Sandbox(process, url, token, sandbox.ca_certificate(kubeconfig), kubeconfig)


def submit(count: int, sandbox: Sandbox) -> list[int]:
    """`count` namespace requests, all waiting for a person's approval whatever the demo's
    rules auto-approve: the bench's own first rule says so."""
    from tenants import demo, services
    from tenants.choices import ApproverRole, GuardrailsMode, PolicyOutcome
    from tenants.models import ApprovalRule, Cluster, Tenant, User

    demo.seed(
        sandbox_api_url=sandbox.url, sandbox_token=sandbox.token, sandbox_ca=sandbox.ca_certificate
    )
    # Berth signs in as the stand-in's admin here, whom Berth's guardrails would not exempt:
    # the bench measures provisioning, on a cluster fenced by nothing Berth checks.
    Cluster.objects.filter(name="sandbox").update(guardrails=GuardrailsMode.EXTERNAL)
    ApprovalRule.objects.create(
        position=0,
        name="bench-approves-by-hand",
        condition="true",
        outcome=PolicyOutcome.REQUIRE,
        approver_role=ApproverRole.PLATFORM_ADMIN,
    )
    tenant = Tenant.objects.get(slug="payments")
    tenant.budget_namespaces = count + 10
    tenant.budget_cpu_millis = tenant.budget_memory_mib = 1000 * (count + 10)
    tenant.save()
    developer = User.objects.get(username="dev")
    return [
        services.submit_request(
            tenant=tenant,
            kind="namespace",
            requester=developer,
            payload={
                "app": f"bench{index:05d}",
                "tier": "dev",
                "cluster": "sandbox",
                "cpu": "100m",
                "memory": "128Mi",
            },
        ).pk
        for index in range(count)
    ]


def reviewed(ids: list[int]) -> list[tuple[int, str]]:
    """What the approver saw before approving: each request's plan digest (objects and
    GitOps change), as the approval queue shows it."""
    from tenants.models import Request
    from tenants.selectors import review

    return [
        (tenancy_request.pk, review(tenancy_request).digest)
        for tenancy_request in Request.objects.filter(pk__in=ids)
        .select_related("tenant")
        .order_by("pk")
    ]


def approve_all(decisions: list[tuple[int, str]]) -> None:
    """Bulk approval as the approval queue does it: the ticked requests approved together,
    each bound to the digest the approver saw, as many at once as the queue allows; each
    approval enqueues its provisioning job as it commits."""
    from tenants import services
    from tenants.models import User

    admin = User.objects.get(username="pat")
    step = services.APPROVE_TOGETHER_MAX
    for start in range(0, len(decisions), step):
        services.approve_together(decisions=decisions[start : start + step], approver=admin)


CELERY = [sys.executable, "-m", "celery", "-A", "portal", "--quiet"]


def start_workers(*, workers: int, concurrency: int, pool: str = "") -> list[subprocess.Popen]:
    """`workers` Celery worker processes with `concurrency` slots each, in `pool` (default:
    the pool Berth's settings choose)."""
    from provisioning.models import WorkerHeartbeat
    from provisioning.tasks import heartbeat

    processes = [
        subprocess.Popen(  # noqa: S603 - our own processes, fixed argv
            [
                *CELERY,
                "worker",
                "--loglevel",
                "WARNING",
                "--concurrency",
                str(concurrency),
                "--hostname",
                f"bench{n}@%h",
                "--without-gossip",
                "--without-mingle",
                *(["--pool", pool] if pool else []),
            ],
            cwd=ROOT,
            start_new_session=True,
        )
        for n in range(workers)
    ]
    # Not timed: wait until every worker takes jobs, so the figure is provisioning only. The
    # first worker up may prefetch every heartbeat sent so far: keep sending until each has
    # answered one.
    while WorkerHeartbeat.objects.count() < workers:
        heartbeat.delay()
        time.sleep(0.2)
    return processes


def stop_workers(processes: list[subprocess.Popen]) -> None:
    for process in processes:
        process.terminate()  # the worker stops its own pool (warm shutdown)
    for process in processes:
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def provision(
    ids: list[int], decisions: list[tuple[int, str]], *, timeout: float
) -> tuple[float, float]:
    """Wall time from the first approval until every request is ready (or failed), and
    the time the approvals took."""
    from tenants.choices import RequestState
    from tenants.models import Request

    started = time.perf_counter()
    approve_all(decisions)
    approving = time.perf_counter() - started
    finished = (RequestState.READY, RequestState.FAILED)
    # The bench's own polling kept cheap (the ids are a range): it shares the CPUs.
    pending = Request.objects.filter(pk__gte=min(ids), pk__lte=max(ids)).exclude(state__in=finished)
    while pending.exists():
        if time.perf_counter() - started > timeout:
            break
        time.sleep(0.05)
    return time.perf_counter() - started, approving


def unfinished(ids: list[int]) -> dict[str, list[str]]:
    """Requests that did not reach Ready, by state, with their status message."""
    from tenants.choices import RequestState
    from tenants.models import Request

    found: dict[str, list[str]] = {}
    for row in Request.objects.filter(pk__in=ids).exclude(state=RequestState.READY):
        found.setdefault(row.state, []).append(f"#{row.pk}: {row.status_message[:200]}")
    return found


def objects_applied(ids: list[int]) -> list[dict]:
    from provisioning.reconcile import current_plan
    from tenants.models import Request

    objects = []
    for tenancy_request in Request.objects.filter(pk__in=ids).order_by("pk"):
        objects += current_plan(tenancy_request).apply
    return objects


def timed_raw_apply(objects: list[dict], sandbox: Sandbox) -> tuple[float, float, float]:
    """raw_apply's wall and CPU time into an empty cluster, and the stand-in's CPU time
    meanwhile."""
    reset_cluster(sandbox)
    before = cpu_seconds(sandbox.process.pid)
    wall, cpu = raw_apply(objects, sandbox)
    return wall, cpu, cpu_seconds(sandbox.process.pid) - before


def sandbox_hook(sandbox: Sandbox, method: str, path: str) -> dict:
    """One of the stand-in's admin hooks, with the admin's token and CA from the kubeconfig
    it wrote."""
    import urllib3

    config = json.loads(sandbox.kubeconfig.read_text())
    token = config["users"][0]["user"]["token"]
    ca_file = Path(tempfile.mkstemp(suffix=".pem")[1])
    ca_file.write_text(sandbox.ca_certificate)
    pool = urllib3.PoolManager(ca_certs=str(ca_file))
    response = pool.request(
        method, f"{sandbox.url}/_sandbox{path}", headers={"Authorization": f"Bearer {token}"}
    )
    if response.status != 200:
        raise SystemExit(f"stand-in hook {method} {path}: HTTP {response.status}")
    return json.loads(response.data)


def reset_cluster(sandbox: Sandbox) -> None:
    """Empty the stand-in again, its request log too."""
    sandbox_hook(sandbox, "POST", "/reset")


def api_calls(sandbox: Sandbox) -> Counter:
    """The calls the stand-in answered since its last reset, by method."""
    return Counter(entry["method"] for entry in sandbox_hook(sandbox, "GET", "/requests")["items"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=500)
    parser.add_argument("--workers", type=int, default=2, help="worker processes")
    parser.add_argument("--concurrency", type=int, default=2, help="pool size per worker")
    parser.add_argument(
        "--pool", default="", help="the workers' pool (prefork, threads); default: Berth's setting"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=1800,
        help="give up waiting for Ready after this many seconds",
    )
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="berth-bench-"))
    start_django(workdir, database="berth_bench")
    from tenants.services import APPROVE_TOGETHER_MAX

    sandbox = start_sandbox(workdir)
    try:
        ids = submit(args.count, sandbox)
        # The approvers' e-mails queued at submission are submission's work, not
        # provisioning's: dropped before the workers start, so they do not run in the timing.
        from portal.celery import app as celery_app

        celery_app.control.purge()
        # The baseline is taken before and after Berth's run and their mean compared: this
        # machine's speed drifts over minutes. The objects are what the approvals bind to.
        objects = objects_applied(ids)
        raw_before, raw_cpu_before, sandbox_cpu_raw_before = timed_raw_apply(objects, sandbox)
        reset_cluster(sandbox)
        workers = start_workers(workers=args.workers, concurrency=args.concurrency, pool=args.pool)
        try:
            # The approver's review of the plans comes before the clock.
            decisions = reviewed(ids)
            sandbox_cpu_before = cpu_seconds(sandbox.process.pid)
            # What the workers spent starting (imports, the engine warmed) is not counted.
            worker_cpu_before = sum(tree_cpu_seconds(process.pid) for process in workers)
            busy_before = machine_busy_seconds()
            database_before = processes_cpu_seconds("postgres")
            berth_seconds, approving = provision(ids, decisions, timeout=args.timeout)
            busy = machine_busy_seconds() - busy_before
            database_cpu = processes_cpu_seconds("postgres") - database_before
            sandbox_cpu_berth = cpu_seconds(sandbox.process.pid) - sandbox_cpu_before
            worker_rss = [tree_peak_rss_mib(process.pid) for process in workers]
            worker_cpu = (
                sum(tree_cpu_seconds(process.pid) for process in workers) - worker_cpu_before
            )
        finally:
            stop_workers(workers)
        missing = unfinished(ids)
        calls = api_calls(sandbox)
        raw_after, raw_cpu_after, sandbox_cpu_raw_after = timed_raw_apply(objects, sandbox)
        # The same objects with Berth's parallelism: its worker processes' pools, each with
        # BERTH_APPLY_CONCURRENCY apply threads.
        from django.conf import settings

        reset_cluster(sandbox)
        parallel_processes = args.workers * args.concurrency
        parallel_threads = settings.BERTH_APPLY_CONCURRENCY
        raw_parallel = parallel_raw_apply(
            objects, sandbox, processes=parallel_processes, threads=parallel_threads
        )
    finally:
        sandbox.process.terminate()
        sandbox.process.wait()

    print(f"namespaces            {args.count}")
    print(f"objects applied       {len(objects)}")
    print(f"stack                 {stack()}, {args.workers} workers x {args.concurrency}")
    print(f"not ready             {sum(len(rows) for rows in missing.values())}")
    print(
        f"API calls by Berth    {sum(calls.values())} "
        f"({', '.join(f'{n} {method}' for method, n in calls.most_common())}; "
        f"{sum(calls.values()) / len(objects):.2f} per object)"
    )
    for state, rows in missing.items():
        print(f"  {state}: {len(rows)}, e.g. {rows[0]}")
    print(f"worker peak RSS       {' + '.join(f'{rss:.0f}' for rss in worker_rss)} MiB")
    print(
        f"berth approve+apply   {berth_seconds:8.2f} s  "
        f"({args.count / berth_seconds:.1f} namespaces/s)"
    )
    print(
        f"  of which approving  {approving:8.2f} s  (approved together, "
        f"{APPROVE_TOGETHER_MAX} at a time, as the approval queue does)"
    )
    raw_seconds = (raw_before + raw_after) / 2
    print(
        f"raw sequential apply  {raw_seconds:8.2f} s  ({len(objects) / raw_seconds:.0f} "
        f"objects/s; mean of {raw_before:.2f} s before and {raw_after:.2f} s after)"
    )
    print(
        f"CPU seconds           stand-in {sandbox_cpu_berth:.2f} + workers {worker_cpu:.2f} "
        f"(berth); stand-in {(sandbox_cpu_raw_before + sandbox_cpu_raw_after) / 2:.2f} + "
        f"client {(raw_cpu_before + raw_cpu_after) / 2:.2f} (raw, mean)"
    )
    print(
        f"machine while berth   {busy:.2f} CPU s busy of {berth_seconds * os.cpu_count():.2f} "
        f"({os.cpu_count()} CPUs); PostgreSQL's processes {database_cpu:.2f}"
    )
    print(
        f"raw parallel apply    {raw_parallel:8.2f} s  ({parallel_processes} processes x "
        f"{parallel_threads} apply threads, Berth's parallelism)"
    )
    print(f"ratio berth / raw parallel {berth_seconds / raw_parallel:8.2f}  (Berth's own overhead)")
    print(f"ratio berth / raw     {berth_seconds / raw_seconds:8.2f}")
    if missing:
        sys.exit(1)


if __name__ == "__main__":
    main()
