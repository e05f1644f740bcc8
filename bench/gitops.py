"""GitOps writer throughput: N approved namespace requests written into one tenant
repository by W worker processes, against a raw `git commit && git push` loop writing the
same files.

    python bench/gitops.py [--count 200] [--workers 4] [--transport daemon|file]

Each worker is its own process calling the writer (`provisioning.reconcile.write_gitops_all`)
for its share of the requests, BERTH_PROVISION_BATCH_MAX at a time, as a provisioning job
hands its batch to the writer once the cluster objects are applied; all of them write the
same repository, served by `git daemon` on loopback (or as a file://
path). Uses DATABASE_URL (a scratch database `berth_bench_gitops_<pid>` on the same PostgreSQL
server: workers then serialise on an advisory lock) when set, else SQLite in a temporary
directory (workers serialise on a file lock). Prints wall time, commits, pushes (attempts
included refused ones), retries and, last, the ratio to the raw loop; exits 1 when a request
has no commit or more than one (timings are never asserted).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from common import start_django  # noqa: E402


def git(*args: str, cwd: Path | None = None) -> str:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(cwd or tempfile.gettempdir()),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_AUTHOR_NAME": "Raw",
        "GIT_AUTHOR_EMAIL": "raw@localhost",
        "GIT_COMMITTER_NAME": "Raw",
        "GIT_COMMITTER_EMAIL": "raw@localhost",
    }
    return subprocess.run(  # noqa: S603 - fixed argv, no shell
        ["git", *args],  # noqa: S607 - git from PATH
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def create_requests(count: int, repo_url: str) -> list[int]:
    """`count` namespace requests of one tenant whose repository is `repo_url`, as
    provisioning leaves them just before the GitOps step."""
    from tenants import demo
    from tenants.models import Tenant

    ids = demo.seed_approved_namespaces(count, app_prefix="bench")
    Tenant.objects.filter(slug="payments").update(gitops_repo_url=repo_url)
    return ids


def worker(ids: list[int]) -> None:
    """One worker process: write the GitOps of its requests as provisioning jobs hand them to
    the writer, BERTH_PROVISION_BATCH_MAX at a time; print one JSON line per request."""
    import django

    django.setup()
    from django.conf import settings

    from provisioning import reconcile
    from provisioning.inputs import plan_inputs_for
    from tenants.models import Request

    size = settings.BERTH_PROVISION_BATCH_MAX
    for start in range(0, len(ids), size):
        batch = ids[start : start + size]
        started = time.time()
        # The job has its requests' plan inputs at hand by then: it rendered their plans.
        requests = list(
            Request.objects.select_related("tenant").filter(pk__in=batch).order_by("pk")
        )
        written = reconcile.write_gitops_all(requests=requests, inputs=plan_inputs_for(requests))
        ended = time.time()
        for request_id in batch:
            outcome = written[request_id]
            if isinstance(outcome, Exception):
                raise outcome
            print(
                json.dumps(
                    {
                        "id": request_id,
                        "outcome": outcome.outcome,
                        "attempts": outcome.attempts,
                        "pushes": outcome.commit.pushes if outcome.commit else 0,
                        # Committed by another request's push, together with its own.
                        "carried": "pushed together with" in outcome.message,
                        "started": started,
                        "ended": ended,
                    }
                ),
                flush=True,
            )


def run_workers(ids: list[int], workers: int) -> list[dict]:
    processes = [
        subprocess.Popen(  # noqa: S603 - our own processes, fixed argv
            [sys.executable, __file__, "--worker", *map(str, ids[index::workers])],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        for index in range(workers)
    ]
    results = []
    for process in processes:
        out, _ = process.communicate()
        if process.returncode != 0:
            raise SystemExit(f"a worker failed with status {process.returncode}")
        results += [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    return results


def raw_loop(files_per_request: list[dict[str, str]], remote: str, workdir: Path) -> float:
    """The baseline: one process, `git add && git commit && git push` per request, the
    same files, into a fresh copy of the starting repository."""
    clone = workdir / "raw-clone"
    git("clone", "--quiet", remote, str(clone))
    started = time.perf_counter()
    for number, files in enumerate(files_per_request):
        for path, content in files.items():
            target = clone / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content)
        git("add", "--all", cwd=clone)
        git("commit", "--quiet", "-m", f"raw {number}", cwd=clone)
        git("push", "--quiet", "origin", "HEAD:main", cwd=clone)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--workers", type=int, default=4, help="worker processes")
    parser.add_argument("--transport", choices=("daemon", "file"), default="daemon")
    parser.add_argument("--worker", nargs="*", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker is not None:
        worker(args.worker)
        return

    from tests.support.gitserver import GitDaemon, commits_on, files_on, init_bare

    workdir = Path(tempfile.mkdtemp(prefix="berth-bench-gitops-"))
    repos = workdir / "repos"
    repos.mkdir()
    init_bare(repos / "payments.git")
    init_bare(repos / "raw.git")
    start_django(workdir / "data", database="berth_bench_gitops", BERTH_GIT_BACKOFF_SECONDS="0.2")
    from django.conf import settings

    daemon = GitDaemon(repos).start() if args.transport == "daemon" else None
    try:

        def url(name: str) -> str:
            return daemon.url(name) if daemon else (repos / name).as_uri()

        ids = create_requests(args.count, url("payments.git"))
        started = time.perf_counter()
        results = run_workers(ids, args.workers)
        berth_seconds = time.perf_counter() - started
        first = min(r["started"] for r in results)
        writing_seconds = max(r["ended"] for r in results) - first

        commits = [c for c in commits_on(repos / "payments.git") if c["request"]]
        written = files_on(repos / "payments.git")
        per_request = [
            {
                path: content
                for path, content in written.items()
                if path.startswith(f"apps/bench{index:03d}/")
            }
            for index in range(args.count)
        ]
        raw_seconds = raw_loop(per_request, url("raw.git"), workdir)
        from provisioning.models import GitCommit

        recorded = list(GitCommit.objects.values_list("request_id", flat=True))
        carried = sum(r["carried"] for r in results)
        pushes = sum(r["pushes"] for r in results if not r["carried"])
        retries = sum(r["attempts"] - 1 for r in results)
    finally:
        if daemon:
            daemon.stop()
    shutil.rmtree(workdir, ignore_errors=True)

    database = "PostgreSQL" if os.environ["DATABASE_URL"].startswith("postgres") else "SQLite"
    lock = "advisory lock" if database == "PostgreSQL" else "file lock"
    print(f"requests              {args.count}")
    print(
        f"stack                 {database} ({lock}), {args.workers} worker processes "
        f"handed {settings.BERTH_PROVISION_BATCH_MAX} requests at a time, git {args.transport}"
    )
    print(f"berth wall time       {berth_seconds:8.2f} s  (from spawning the workers)")
    print(
        f"berth writing time    {writing_seconds:8.2f} s  "
        f"({args.count / writing_seconds:.1f} commits/s, first write to last)"
    )
    print(
        f"commits               {len(commits)} (distinct requests "
        f"{len({c['request'] for c in commits})})"
    )
    leaders = len(results) - carried
    print(
        f"pushes                {pushes} (refused and redone: {pushes - leaders}); "
        f"{carried} commits went out in another request's push"
    )
    print(f"transient retries     {retries}")
    print(f"raw commit+push loop  {raw_seconds:8.2f} s  ({args.count / raw_seconds:.1f} commits/s)")
    lost = args.count - len({c["request"] for c in commits})
    duplicated = len(commits) - len({c["request"] for c in commits})
    # Each request's commit recorded once too (the page shows it).
    duplicated += len(recorded) - len(set(recorded))
    lost += args.count - len(set(recorded))
    print(f"lost / duplicated     {lost} / {duplicated} (in git and in Berth's records)")
    print(f"ratio berth / raw     {writing_seconds / raw_seconds:8.2f}")
    if lost or duplicated:
        sys.exit(1)


if __name__ == "__main__":
    main()
