"""Hibernation at scale: N namespaces put to sleep by their tier's schedule and woken by it,
through the one door, with the API calls it costs the cluster.

    python bench/hibernation.py [--count 500] [--profile FILE]

Provisions N dev namespaces through the engine into the stand-in as `make run` starts it (its
own process, HTTPS, Berth with the chart's RBAC; no kube-green, so Berth scales), as
bench/standing.py does. The dev tier sleeps every night from a full hour two hours ahead, for
three hours; each namespace's sleep key is queued as it becomes Ready (what the engine does)
and looked at once. Then each namespace gets the workloads of the hibernation issue, written
by the cluster's admin: two Deployments (3 and 1 replicas), a StatefulSet (2) and a CronJob.
The bench's clock then moves to the sleep moment (time_machine, ticking), and the queue is
drained as a worker drains it (`door.drain`: each due sleep key's reconcile, which puts its
namespace to sleep); then to the wake moment, drained again. Each direction prints its wall
time, the API calls the stand-in answered (its running total; by call from its request log,
which keeps the last 10,000) per namespace, the objects touched per namespace (what the
audit events of the sleep and the wake list as changed) and their ratio. Last line: the
ratio of API calls to objects touched, per direction (the goal: at most 2). Exits 1 when a
namespace did not sleep or wake, or came back other than it was.

Uses PostgreSQL and Redis when DATABASE_URL and REDIS_URL are set (a scratch database), else
SQLite and the filesystem queue. `--profile FILE`: cProfile of the sleep's drain, written to
FILE (pstats).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

# The namespace: what each one holds, and what each object's count is.
REPLICAS = {("deployments", "web"): 3, ("deployments", "worker"): 1, ("statefulsets", "db"): 2}
BEFORE = "berth.dev/replicas-before-sleep"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=500)
    parser.add_argument("--profile", type=Path, help="write cProfile stats of the sleep here")
    args = parser.parse_args()

    from common import start_django

    workdir = Path(tempfile.mkdtemp(prefix="berth-bench-hibernation-"))
    start_django(workdir, database="berth_bench_hibernation")
    from provision import start_sandbox

    sandbox = start_sandbox(workdir)
    try:
        failures = run(args, sandbox)
    finally:
        sandbox.process.terminate()
        sandbox.process.wait(timeout=30)
    if failures:
        raise SystemExit("\n".join(failures[:20]))


class Admin:
    """The cluster's admin over HTTPS (someone else than Berth): the bench's own writes and
    reads of the workloads, never counted in a phase."""

    def __init__(self, sandbox) -> None:
        import urllib3

        config = json.loads(sandbox.kubeconfig.read_text())
        self.headers = {"Authorization": f"Bearer {config['users'][0]['user']['token']}"}
        ca_file = Path(tempfile.mkstemp(suffix=".pem")[1])
        ca_file.write_text(sandbox.ca_certificate)
        self.pool = urllib3.PoolManager(ca_certs=str(ca_file), maxsize=4)
        self.url = sandbox.url

    def call(self, method: str, path: str, body: dict | None = None) -> dict:
        headers = dict(self.headers)
        if body is not None:
            headers["Content-Type"] = "application/json"
        answer = self.pool.request(
            method,
            self.url + path,
            body=None if body is None else json.dumps(body),
            headers=headers,
        )
        if answer.status >= 300:
            raise SystemExit(f"{method} {path}: HTTP {answer.status} {answer.data[:300]!r}")
        return json.loads(answer.data) if answer.data else {}

    def total(self) -> int:
        return self.call("GET", "/_sandbox/requests")["total"]

    def log(self) -> list[dict]:
        return self.call("GET", "/_sandbox/requests")["items"]

    def clear_log(self) -> None:
        self.call("DELETE", "/_sandbox/requests")


def workloads(namespace: str) -> list[tuple[str, dict]]:
    """The issue's namespace: (collection path, object) for each of its four workloads."""
    template = {"spec": {"containers": [{"name": "app", "image": "registry.example/app:1"}]}}

    def pods(app: str) -> dict:
        return {"metadata": {"labels": {"app": app}}, **template}

    def scaled(kind: str, name: str, **spec) -> dict:
        return {
            "apiVersion": "apps/v1",
            "kind": kind,
            "metadata": {"name": name},
            "spec": {
                "replicas": REPLICAS[(kind.lower() + "s", name)],
                "selector": {"matchLabels": {"app": name}},
                "template": pods(name),
                **spec,
            },
        }

    apps = f"/apis/apps/v1/namespaces/{namespace}"
    job = {"spec": {"template": {**pods("report"), "spec": {**template["spec"]}}}}
    job["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    cronjob = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "report"},
        "spec": {"schedule": "0 * * * *", "jobTemplate": job},
    }
    return [
        (f"{apps}/deployments", scaled("Deployment", "web")),
        (f"{apps}/deployments", scaled("Deployment", "worker")),
        (f"{apps}/statefulsets", scaled("StatefulSet", "db", serviceName="db")),
        (f"/apis/batch/v1/namespaces/{namespace}/cronjobs", cronjob),
    ]


def check(admin: Admin, names: set[str], *, asleep: bool) -> list[str]:
    """What is not as it should be on the cluster: every workload at zero and every CronJob
    suspended, each count kept; or each back exactly as it was."""
    wrong = []
    for resource in ("deployments", "statefulsets"):
        group = f"/apis/apps/v1/{resource}"
        for item in admin.call("GET", group)["items"]:
            meta = item["metadata"]
            if meta["namespace"] not in names:
                continue
            want = REPLICAS[(resource, meta["name"])]
            kept = (meta.get("annotations") or {}).get(BEFORE)
            got = (item["spec"]["replicas"], kept)
            if got != ((0, str(want)) if asleep else (want, None)):
                wrong.append(f"{resource} {meta['namespace']}/{meta['name']}: {got}")
    for item in admin.call("GET", "/apis/batch/v1/cronjobs")["items"]:
        meta = item["metadata"]
        if meta["namespace"] in names and bool(item["spec"].get("suspend")) != asleep:
            wrong.append(f"cronjob {meta['namespace']}/{meta['name']}: {item['spec']}")
    return wrong


def call_of(entry: dict) -> str:
    """A logged request as its verb and resource: "LIST deployments", "PATCH cronjobs"."""
    parts = entry["path"].strip("/").split("/")
    rest = parts[2:] if parts[0] == "api" else parts[3:] if parts[0] == "apis" else []
    if not rest:
        return f"{entry['method']} {entry['path']} (discovery)"
    if rest[0] == "namespaces" and len(rest) >= 3:
        resource, named = rest[2], len(rest) >= 4
    else:
        resource, named = rest[0], len(rest) >= 2
    verb = entry["method"] if named or entry["method"] != "GET" else "LIST"
    return f"{verb} {resource}"


def drain() -> Counter:
    """The queue drained as a worker drains it, until nothing is due: the reconciles done,
    by key kind and outcome."""
    from provisioning.reconcile import door

    done: Counter = Counter()
    while got := door.drain(worker="bench", limit=100):
        for key, outcome in got.items():
            done[f"{key.kind} {outcome.phase.name.lower()}"] += 1
    return done


def phase(admin: Admin, names: list[str], *, asleep: bool, at: datetime, profile=None) -> dict:
    """One direction: the clock at `at`, the queue drained; what it took and cost."""
    import time_machine

    from tenants.models import AuditEvent, Namespace

    action = "namespace.slept" if asleep else "namespace.woke"
    admin.clear_log()
    before = admin.total()
    with time_machine.travel(at, tick=True):
        started = time.perf_counter()
        if profile is not None:
            profile.enable()
        done = drain()
        if profile is not None:
            profile.disable()
        wall = time.perf_counter() - started
    calls = admin.total() - before
    logged = admin.log()
    changes = [
        len(after.get("changes") or [])
        for after in AuditEvent.objects.filter(action=action).values_list("after", flat=True)
    ]
    failures = [
        f"{name} is not {'asleep' if asleep else 'awake'} in Berth's records"
        for name in set(names)
        - set(
            Namespace.objects.filter(name__in=names, asleep=asleep).values_list("name", flat=True)
        )
    ]
    failures += check(admin, set(names), asleep=asleep)
    return {
        "wall": wall,
        "calls": calls,
        "by_call": Counter(call_of(entry) for entry in logged),
        "logged": len(logged),
        "touched": sum(changes),
        "recorded": len(changes),
        "drained": done,
        "failures": failures,
    }


def run(args, sandbox) -> list[str]:
    from common import stack
    from provision import reviewed, submit

    from provisioning import reconcile
    from tenants import services
    from tenants.models import EnvironmentTier, Namespace, User

    # The dev tier sleeps every night for three hours, from a full hour two hours ahead.
    sleep_at = (datetime.now(UTC) + timedelta(hours=2)).replace(minute=0, second=0, microsecond=0)
    wake_at = sleep_at + timedelta(hours=3)

    # --- N namespaces, provisioned through the engine; each one's sleep key queued ---------
    started = time.perf_counter()
    ids = submit(args.count, sandbox)
    EnvironmentTier.objects.filter(slug="dev").update(  # the demo's tier, seeded by submit
        sleep_weekdays="*", sleep_at=sleep_at.time(), wake_at=wake_at.time(), sleep_time_zone="UTC"
    )
    approver = User.objects.get(username="pat")
    for request_id, digest in reviewed(ids):
        services.approve_request(request_id=request_id, approver=approver, plan_digest=digest)
        reconcile.converge(request_id=request_id, worker="bench")
    made = Namespace.objects.filter(state="active", request_id__in=ids)
    names = sorted(made.values_list("name", flat=True))
    if len(names) != args.count:
        raise SystemExit(f"only {len(names)} of {args.count} namespaces provisioned")
    first_look = drain()  # each sleep key's first look, then it waits for the moment
    seeding = time.perf_counter() - started

    admin = Admin(sandbox)
    for name in names:
        for path, obj in workloads(name):
            admin.call("POST", path, obj)
    failures = check(admin, set(names), asleep=False)

    profile = cProfile.Profile() if args.profile else None
    slept = phase(admin, names, asleep=True, at=sleep_at + timedelta(seconds=1), profile=profile)
    woke = phase(admin, names, asleep=False, at=wake_at + timedelta(seconds=1))
    if profile is not None:
        profile.dump_stats(str(args.profile))
    from portal.celery import app as celery_app

    celery_app.control.purge()  # the "look at the queue" messages nobody here consumes

    count = args.count
    print(f"stack: {stack()}; {count} namespaces provisioned in {seeding:.1f} s")
    print(f"sleep keys looked at as each namespace became Ready: {dict(first_look)}")
    print(
        f"each namespace: 2 Deployments (3 and 1 replicas), a StatefulSet (2), a CronJob; "
        f"the dev tier asleep {sleep_at:%H:%M}-{wake_at:%H:%M} UTC, carried out by Berth"
    )
    for said, figures in (("sleep", slept), ("wake", woke)):
        per_ns = figures["calls"] / count
        touched = figures["touched"] / count
        print(
            f"{said}: {count} namespaces in {figures['wall']:.2f} s "
            f"({count / figures['wall']:.1f} a second, one worker); reconciles: "
            f"{dict(figures['drained'])}"
        )
        print(
            f"{said}: {figures['calls']} API calls, {per_ns:.2f} per namespace; "
            f"{touched:.2f} objects touched per namespace ({figures['recorded']} recorded); "
            f"{per_ns / touched if touched else float('inf'):.2f} calls an object"
        )
        share = figures["calls"] / max(1, figures["logged"]) / count
        calls = ", ".join(
            f"{name} {number * share:.2f}" for name, number in figures["by_call"].most_common()
        )
        print(
            f"{said}: per namespace by call (the stand-in's log, last {figures['logged']}): {calls}"
        )
        failures += figures["failures"]
    if args.profile:
        print(f"cProfile of the sleep's drain: {args.profile}")
    ratios = [
        figures["calls"] / figures["touched"] if figures["touched"] else float("inf")
        for figures in (slept, woke)
    ]
    print(
        f"ratio API calls / objects touched per namespace: sleep {ratios[0]:.2f}, "
        f"wake {ratios[1]:.2f} (goal ≤ 2; {slept['calls'] / count:.1f} and "
        f"{woke['calls'] / count:.1f} calls for {slept['touched'] / count:.0f} objects)"
    )
    return failures


if __name__ == "__main__":
    main()
