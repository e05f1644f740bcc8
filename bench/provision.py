"""Provisioning throughput: N namespace requests approved in bulk, provisioned by Celery
workers, against a raw script applying the same objects with the official client.

    python bench/provision.py [--count 500] [--workers 2] [--concurrency 2]

Uses DATABASE_URL (a scratch database `berth_bench` on the same PostgreSQL server) and
REDIS_URL when set, else SQLite and the filesystem broker in a temporary directory. The
Kubernetes API is the sandbox stand-in, started as its own process. Prints wall times and
the ratio; nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def scratch_postgres(url: str) -> str:
    """A fresh `berth_bench` database beside the one DATABASE_URL names."""
    import psycopg

    parts = urlsplit(url)
    with psycopg.connect(urlunsplit(parts._replace(path="/postgres")), autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS berth_bench WITH (FORCE)")
        conn.execute("CREATE DATABASE berth_bench")
    return urlunsplit(parts._replace(path="/berth_bench"))


def prepare_environment(workdir: Path) -> None:
    from cryptography.fernet import Fernet

    os.environ.update(
        DJANGO_SETTINGS_MODULE="portal.settings",
        BERTH_DATA_DIR=str(workdir),
        SECRET_KEY=secrets.token_urlsafe(40),
        BERTH_FERNET_KEYS=Fernet.generate_key().decode(),
        BERTH_QUEUE=f"berth-bench-{os.getpid()}",
        BERTH_LOG_LEVEL="WARNING",
    )
    if os.environ.get("DATABASE_URL", "").startswith("postgres"):
        os.environ["DATABASE_URL"] = scratch_postgres(os.environ["DATABASE_URL"])
    else:
        os.environ["DATABASE_URL"] = f"sqlite:///{workdir / 'bench.sqlite3'}"


def start_sandbox(workdir: Path) -> tuple[subprocess.Popen, str]:
    from portal.sandbox import sandbox_command

    command = sandbox_command(port="0", data_dir=workdir)
    state = command.index("--state-file")
    del command[state : state + 2]  # in memory: the bench starts from an empty cluster
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)  # noqa: S603
    url = process.stdout.readline().split()[-1]
    return process, url


def submit(count: int, sandbox_url: str) -> list[int]:
    from tenants import demo, services
    from tenants.models import Tenant, User

    demo.seed(sandbox_api_url=sandbox_url)
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


def approve_all(ids: list[int]) -> None:
    """Bulk approval: each approval enqueues its provisioning job as it commits."""
    from provisioning.engine import current_plan
    from tenants import services
    from tenants.models import Request, User

    admin = User.objects.get(username="pat")
    for tenancy_request in Request.objects.filter(pk__in=ids).select_related("tenant"):
        services.approve_request(
            request_id=tenancy_request.pk,
            approver=admin,
            plan_digest=current_plan(tenancy_request).digest,
        )


def start_workers(*, workers: int, concurrency: int) -> list[subprocess.Popen]:
    from provisioning.models import WorkerHeartbeat
    from provisioning.tasks import heartbeat

    processes = [
        subprocess.Popen(  # noqa: S603
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "portal",
                "--quiet",
                "worker",
                "--loglevel",
                "WARNING",
                "--concurrency",
                str(concurrency),
                "--hostname",
                f"bench{n}@%h",
                "--without-gossip",
                "--without-mingle",
            ],
            cwd=ROOT,
            start_new_session=True,
        )
        for n in range(workers)
    ]
    # Not timed: wait until the workers take jobs, so the figure is provisioning only.
    for _ in range(workers * concurrency):
        heartbeat.delay()
    while WorkerHeartbeat.objects.count() < workers:
        time.sleep(0.2)
    return processes


def stop_workers(processes: list[subprocess.Popen]) -> None:
    for process in processes:
        os.killpg(process.pid, signal.SIGTERM)
    for process in processes:
        process.wait(timeout=30)


def provision(ids: list[int]) -> float:
    """Wall time from the first approval until every request is ready (or failed)."""
    from tenants.choices import RequestState
    from tenants.models import Request

    started = time.perf_counter()
    approve_all(ids)
    finished = (RequestState.READY, RequestState.FAILED)
    while Request.objects.filter(pk__in=ids).exclude(state__in=finished).exists():
        time.sleep(0.1)
    elapsed = time.perf_counter() - started
    failed = Request.objects.filter(pk__in=ids, state=RequestState.FAILED).count()
    if failed:
        print(f"warning: {failed} requests failed", file=sys.stderr)
    return elapsed


def objects_applied(ids: list[int]) -> list[dict]:
    from provisioning.engine import current_plan
    from tenants.models import Request

    objects = []
    for tenancy_request in Request.objects.filter(pk__in=ids).order_by("pk"):
        objects += current_plan(tenancy_request).apply
    return objects


def raw_apply(objects: list[dict], sandbox_url: str) -> float:
    """The baseline: the official client, one server-side apply after another."""
    import urllib3
    from kubernetes import client
    from kubernetes.dynamic import DynamicClient

    urllib3.request("POST", f"{sandbox_url}/_sandbox/reset")  # an empty cluster again
    configuration = client.Configuration(host=sandbox_url)
    dynamic = DynamicClient(client.ApiClient(configuration))
    started = time.perf_counter()
    for obj in objects:
        resource = dynamic.resources.get(api_version=obj["apiVersion"], kind=obj["kind"])
        resource.server_side_apply(
            body=obj,
            namespace=obj["metadata"].get("namespace"),
            field_manager="raw",
            force_conflicts=True,
        )
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=500)
    parser.add_argument("--workers", type=int, default=2, help="worker processes")
    parser.add_argument("--concurrency", type=int, default=2, help="pool size per worker")
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="berth-bench-"))
    prepare_environment(workdir)
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    sandbox, sandbox_url = start_sandbox(workdir)
    try:
        ids = submit(args.count, sandbox_url)
        workers = start_workers(workers=args.workers, concurrency=args.concurrency)
        try:
            berth_seconds = provision(ids)
        finally:
            stop_workers(workers)
        objects = objects_applied(ids)
        raw_seconds = raw_apply(objects, sandbox_url)
    finally:
        sandbox.terminate()
        sandbox.wait()

    database = "PostgreSQL" if os.environ["DATABASE_URL"].startswith("postgres") else "SQLite"
    broker = "Redis" if os.environ.get("REDIS_URL") else "filesystem"
    print(f"namespaces            {args.count}")
    print(f"objects applied       {len(objects)}")
    print(
        f"stack                 {database}, {broker} broker, "
        f"{args.workers} workers x {args.concurrency}"
    )
    print(
        f"berth approve+apply   {berth_seconds:8.2f} s  "
        f"({args.count / berth_seconds:.1f} namespaces/s)"
    )
    print(
        f"raw sequential apply  {raw_seconds:8.2f} s  ({len(objects) / raw_seconds:.0f} objects/s)"
    )
    print(f"ratio berth / raw     {berth_seconds / raw_seconds:8.2f}")


if __name__ == "__main__":
    main()
