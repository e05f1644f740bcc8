"""Standing cost: what Berth costs a cluster while nothing happens, and how soon it sees
what someone changed by hand.

    python bench/standing.py [--count 10000] [--window 60] [--changes 100]

Provisions N namespaces (the dev tier, which repairs drift) into the stand-in as `make run`
starts it (its own process, HTTPS, Berth with the chart's RBAC), through the engine. Then,
with the drift watcher running in a process of its own (`manage.py watch_clusters`, its
database statements counted), a Celery worker and Celery beat beside it as `make run` starts
them, and nothing changing for `--window` seconds: the API calls the stand-in answered (its
request log), per hour, and the database's transactions (on PostgreSQL); and beat's
reconcile run once, its API calls counted, with the watcher healthy and, for comparison,
without. Then `--changes` out-of-band changes through the cluster admin's token (half
quota edits, half NetworkPolicy deletions): the time until each is recorded as drift and
until it is repaired (p50 / p99). Peak memory is each process's own high-water mark
(Linux's VmHWM; the worker's summed with its pool's). Prints,
last, the ratio: idle API calls per hour divided by namespaces. Exits 1 when a change was
never recorded or repaired.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--window", type=float, default=60.0, help="idle seconds measured")
    parser.add_argument("--changes", type=int, default=100)
    parser.add_argument("--deadline", type=float, default=120.0, help="per change, seconds")
    parser.add_argument(
        "--sync-deadline",
        type=float,
        default=3600.0,
        help="seconds for the watcher's first listing of every kind, compared page by page",
    )
    parser.add_argument("--watcher-child", metavar="COUNT_FILE", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.watcher_child:
        watch_counting_queries(Path(args.watcher_child))
        return

    from common import start_django

    workdir = Path(tempfile.mkdtemp(prefix="berth-bench-standing-"))
    start_django(workdir, database="berth_bench_standing")
    from provision import start_sandbox

    sandbox = start_sandbox(workdir)
    try:
        run(args, sandbox)
    finally:
        sandbox.process.terminate()
        sandbox.process.wait(timeout=30)


def run(args, sandbox) -> None:
    import urllib3
    from common import own_peak_rss_mib, peak_rss_mib, stack, tree_peak_rss_mib
    from django.db import connection
    from provision import CELERY, reviewed, sandbox_hook, start_workers, stop_workers, submit

    from provisioning import reconcile, tasks
    from provisioning.jobs.watch_streams import (
        GUARDRAIL_KINDS,
        GUARDRAIL_WATCH_SECONDS,
        WATCHED_KINDS,
        Timing,
    )
    from provisioning.models import ClusterWatch
    from tenants import services
    from tenants.models import Cluster, Namespace, User

    # --- N namespaces, provisioned through the engine --------------------------------------
    started = time.perf_counter()
    ids = submit(args.count, sandbox)
    admin = User.objects.get(username="pat")
    for request_id, digest in reviewed(ids):
        services.approve_request(request_id=request_id, approver=admin, plan_digest=digest)
        reconcile.converge(request_id=request_id, worker="bench")
    names = sorted(Namespace.objects.filter(state="active").values_list("name", flat=True))
    if len(names) != args.count:
        raise SystemExit(f"only {len(names)} of {args.count} namespaces provisioned")
    seeding = time.perf_counter() - started
    cluster = Cluster.objects.get(name="sandbox")

    def calls() -> int:
        """Requests the stand-in answered so far (its log keeps only the last ones)."""
        return sandbox_hook(sandbox, "GET", "/requests")["total"]

    def beat_calls() -> tuple[int, int]:
        """The API calls of one cycle of beat's reconcile, then of its truth-table job."""
        counted = []
        for job in (tasks.reconcile, tasks.take_truth_tables):
            before = calls()
            job()
            counted.append(calls() - before)
        return counted[0], counted[1]

    # --- beat's periodic jobs without a watcher: what they cost before ---------------------
    polled, truth_polled = beat_calls()

    # --- idle, watched ---------------------------------------------------------------------
    timing = Timing()  # as manage.py watch_clusters runs
    counted = Path(os.environ["BERTH_DATA_DIR"]) / "watcher-queries"
    watcher = subprocess.Popen(  # noqa: S603 (this script, run again)
        [sys.executable, __file__, "--watcher-child", str(counted)], env=os.environ.copy()
    )
    watch_started = time.monotonic()
    deadline = watch_started + args.sync_deadline
    while not ClusterWatch.objects.filter(
        cluster=cluster, relists__gte=len(WATCHED_KINDS)
    ).exists():
        if time.monotonic() > deadline or watcher.poll() is not None:
            raise SystemExit("the watcher never listed every kind")
        time.sleep(0.2)
    synced_after = time.monotonic() - watch_started
    listed_peak = peak_rss_mib(watcher.pid)
    # A worker and beat as `make run` starts them, idle beside the watcher: their calls are
    # in the window's count, their memory below. The jobs the approvals queued are dropped
    # first: the seeding converged each request in this process already.
    from portal.celery import app as celery_app

    celery_app.control.purge()
    workers = start_workers(workers=1, concurrency=2)
    beat = subprocess.Popen(  # noqa: S603 - Celery beat, fixed argv
        [*CELERY, "beat", "--loglevel", "WARNING"],
        cwd=ROOT,
        start_new_session=True,
    )
    time.sleep(2 * timing.heartbeat_seconds)  # the initial comparison settles
    before = calls()
    queries_before = queries_of(counted)
    transactions_before = database_transactions()
    time.sleep(args.window)
    # A watch request is logged when it ends: the window's own streams are counted by what
    # they are, one request per kind per `watch_seconds`.
    idle_logged = calls() - before
    # The guardrail kinds' streams (jobs.watch_streams) watch an hour at a time.
    idle_per_hour = (
        max(idle_logged, len(WATCHED_KINDS) * args.window / timing.watch_seconds)
        * 3600
        / args.window
        + len(WATCHED_KINDS) * 3600 / timing.resync_seconds
        + len(GUARDRAIL_KINDS) * (3600 / GUARDRAIL_WATCH_SECONDS + 3600 / timing.resync_seconds)
    )
    queries_per_hour = (queries_of(counted) - queries_before) * 3600 / args.window
    transactions = database_transactions()
    transactions_per_hour = (
        (transactions - transactions_before) * 3600 / args.window
        if transactions is not None and transactions_before is not None
        else None
    )
    idle_peak = peak_rss_mib(watcher.pid)
    worker_peak, beat_peak = tree_peak_rss_mib(workers[0].pid), peak_rss_mib(beat.pid)
    beat.terminate()
    beat.wait(timeout=30)
    stop_workers(workers)

    # --- out-of-band changes -----------------------------------------------------------------
    config = json.loads(sandbox.kubeconfig.read_text())
    token = config["users"][0]["user"]["token"]
    ca_file = Path(tempfile.mkstemp(suffix=".pem")[1])
    ca_file.write_text(sandbox.ca_certificate)
    pool = urllib3.PoolManager(ca_certs=str(ca_file))
    recorded, repaired, lost = [], [], 0
    for number in range(args.changes):
        name = names[number % len(names)]
        edit = number % 2 == 0
        if edit:
            path = f"/api/v1/namespaces/{name}/resourcequotas/berth-quota"
            ref = f"ResourceQuota/{name}/berth-quota"
            body = json.dumps({"spec": {"hard": {"requests.cpu": f"{64 + number}"}}})
            answer = pool.request(
                "PATCH",
                sandbox.url + path,
                body=body,
                headers={
                    "Authorization": f"Bearer {token}",
                    "Content-Type": "application/merge-patch+json",
                },
            )
        else:
            path = f"/apis/networking.k8s.io/v1/namespaces/{name}/networkpolicies/berth-allow-dns"
            ref = f"NetworkPolicy/{name}/berth-allow-dns"
            answer = pool.request(
                "DELETE", sandbox.url + path, headers={"Authorization": f"Bearer {token}"}
            )
        if answer.status >= 300:
            raise SystemExit(f"the out-of-band change {path} was refused: {answer.status}")
        changed_at = time.perf_counter()
        seen = fixed = None
        deadline = time.monotonic() + args.deadline
        while (seen is None or fixed is None) and time.monotonic() < deadline:
            drift = (
                Namespace.objects.filter(name=name, state="active")
                .values_list("drift", flat=True)
                .get()
            )
            finding = next((f for f in drift if f["object"] == ref), None)
            if finding is not None and seen is None:
                seen = time.perf_counter() - changed_at
            if finding is not None and finding.get("repaired") and fixed is None:
                fixed = time.perf_counter() - changed_at
            time.sleep(0.01)
        if seen is None or fixed is None:
            lost += 1
            continue
        recorded.append(seen)
        repaired.append(fixed)
    watching_peak = peak_rss_mib(watcher.pid)
    reconcile_watched, truth_watched = beat_calls()  # with the watcher healthy
    watcher.send_signal(signal.SIGTERM)
    watcher.wait(timeout=timing.watch_seconds + 30)
    connection.close()

    print(f"stack: {stack()}; {args.count} namespaces provisioned in {seeding:.1f} s")
    print(
        f"beat's reconcile, no watcher: {polled} API calls "
        f"({polled / args.count:.1f} per namespace)"
    )
    print(f"beat's reconcile, watcher healthy: {reconcile_watched} API calls")
    print(
        f"beat's truth tables, no watcher: {truth_polled} API calls "
        f"({truth_polled / args.count:.1f} per namespace); watcher healthy: {truth_watched} "
        f"({truth_watched / args.count:.2f} per namespace)"
    )
    print(
        f"idle, watched, {args.window:.0f} s: {idle_logged} API calls logged; "
        f"{idle_per_hour:.0f} per hour per cluster (a watch per kind every "
        f"{timing.watch_seconds} s, per guardrail kind every {GUARDRAIL_WATCH_SECONDS} s, "
        "the resync's LISTs)"
    )
    print(f"database queries while idle: {queries_per_hour:.0f} per hour (the watcher's)")
    if transactions_per_hour is not None:
        print(
            f"database transactions while idle: {transactions_per_hour:.0f} per hour "
            "(every process: watcher, worker, beat)"
        )
    print(f"out-of-band changes: {len(recorded)} of {args.changes} recorded and repaired")
    print(
        f"recorded as drift after: p50 {statistics.median(recorded or [0]):.3f} s, "
        f"p99 {percentile(recorded, 0.99):.3f} s"
    )
    print(
        f"repaired after: p50 {statistics.median(repaired or [0]):.3f} s, "
        f"p99 {percentile(repaired, 0.99):.3f} s"
    )
    print(f"watcher's first listing of every kind compared after {synced_after:.1f} s")
    print(
        f"watcher process peak memory: {listed_peak:.0f} MiB once every kind was listed, "
        f"{idle_peak:.0f} MiB idle, {watching_peak:.0f} MiB through the changes"
    )
    print(
        f"worker peak memory while idle: {worker_peak:.0f} MiB (with its pool); "
        f"beat: {beat_peak:.0f} MiB"
    )
    print(f"peak memory of the bench's own process (the seeding): {own_peak_rss_mib():.0f} MiB")
    print(f"ratio idle API calls per hour / namespaces: {idle_per_hour / args.count:.3f}")
    if lost:
        raise SystemExit(f"{lost} change(s) never recorded and repaired")


def watch_counting_queries(count_file: Path) -> None:
    """The watcher's process: `manage.py watch_clusters`, as deployed, with every database
    statement it runs counted, the count written to `count_file` each second."""
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connections
    from django.db.backends.signals import connection_created

    statements = [0]

    def counted(execute, sql, params, many, context):
        statements[0] += 1
        return execute(sql, params, many, context)

    def wrap(sender, connection, **_):
        connection.execute_wrappers.append(counted)

    connection_created.connect(wrap, weak=False)
    for each in connections.all():
        each.close()  # opened again, counted

    def write_count() -> None:
        while True:
            count_file.write_text(str(statements[0]))
            time.sleep(1.0)

    threading.Thread(target=write_count, daemon=True).start()
    call_command("watch_clusters", stdout=open(os.devnull, "w"))  # noqa: SIM115


def database_transactions() -> int | None:
    """Transactions committed or rolled back in the bench's database so far, by every
    process (PostgreSQL's statistics; None on SQLite)."""
    from django.db import connection

    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute(
            "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = %s",
            [connection.settings_dict["NAME"]],
        )
        return int(cursor.fetchone()[0])


def queries_of(count_file: Path) -> int:
    """The statements the watcher's process has run so far (as of its last second)."""
    try:
        return int(count_file.read_text() or 0)
    except FileNotFoundError:
        return 0


if __name__ == "__main__":
    main()
