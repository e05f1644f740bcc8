"""What every bench sets up the same way: a scratch database, settings for a throwaway
data directory, and the peak memory and CPU time of the processes it measured."""

from __future__ import annotations

import atexit
import os
import resource
import secrets
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent


def scratch_postgres(url: str, name: str) -> str:
    """A fresh database `name` beside the one `url` names; returns its URL."""
    import psycopg

    parts = urlsplit(url)
    with psycopg.connect(urlunsplit(parts._replace(path="/postgres")), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {name}")
    return urlunsplit(parts._replace(path=f"/{name}"))


def drop_scratch_postgres(url: str) -> None:
    import psycopg

    parts = urlsplit(url)
    name = parts.path.lstrip("/")
    with psycopg.connect(urlunsplit(parts._replace(path="/postgres")), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def prepare_environment(workdir: Path, *, database: str, **extra: str) -> None:
    """Settings for a bench run: Berth's production settings module, a data directory and
    keys of its own, mail kept in memory, and PostgreSQL (a scratch database `database`_pid
    beside DATABASE_URL's, dropped at exit) when DATABASE_URL names one, else SQLite in
    `workdir`."""
    from cryptography.fernet import Fernet

    workdir.mkdir(parents=True, exist_ok=True)
    os.environ.update(
        DJANGO_SETTINGS_MODULE="portal.settings",
        BERTH_DATA_DIR=str(workdir),
        SECRET_KEY=secrets.token_urlsafe(40),
        BERTH_FERNET_KEYS=Fernet.generate_key().decode(),
        BERTH_QUEUE=f"berth-bench-{os.getpid()}",
        BERTH_LOG_LEVEL="WARNING",
        # Notifications are part of the work, delivery is not: no SMTP server here.
        EMAIL_BACKEND="django.core.mail.backends.locmem.EmailBackend",
        # The bench's repositories (file://, git://, http://) and stand-in are on this
        # machine, as `make run`'s: what production refuses, allowed here.
        BERTH_GIT_ALLOW_INSECURE="1",
        BERTH_EGRESS_ALLOW="127.0.0.0/8,::1/128",
        **extra,
    )
    if os.environ.get("DATABASE_URL", "").startswith("postgres"):
        # A database of this run's own, dropped when it ends: two runs of one bench (a long
        # one and the suite's smoke run of it) never share, or drop, each other's.
        scratch = scratch_postgres(os.environ["DATABASE_URL"], f"{database}_{os.getpid()}")
        os.environ["DATABASE_URL"] = scratch
        atexit.register(drop_scratch_postgres, scratch)
    else:
        os.environ["DATABASE_URL"] = f"sqlite:///{workdir / 'bench.sqlite3'}"


def start_django(workdir: Path, *, database: str, **extra: str) -> None:
    """prepare_environment, then Django set up and the scratch database migrated."""
    prepare_environment(workdir, database=database, **extra)
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


def stack() -> str:
    database = "PostgreSQL" if os.environ["DATABASE_URL"].startswith("postgres") else "SQLite"
    broker = "Redis" if os.environ.get("REDIS_URL") else "filesystem queue"
    return f"{database}, {broker}"


def rss_mib(pid: int) -> float:
    """Resident memory of one live process (Linux /proc), in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def peak_rss_mib(pid: int) -> float:
    """The high-water mark of one live process's resident memory, in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def tree_pids(pid: int) -> list[int]:
    """A process and its descendants (a Celery worker and its pool's children)."""
    found = [pid]
    for child in Path("/proc").glob("[0-9]*"):
        try:
            stat = (child / "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found += tree_pids(int(child.name))
    return found


def _summed_over_tree(pid: int, measure: Callable[[int], float]) -> float:
    """`measure` of a process plus its live children's (a child gone meanwhile counts 0)."""
    total = 0.0
    for member in tree_pids(pid):
        try:
            total += measure(member)
        except OSError:
            continue
    return total


def tree_peak_rss_mib(pid: int) -> float:
    """Peak resident memory summed over a process and its children (each one's own peak)."""
    return _summed_over_tree(pid, peak_rss_mib)


def own_peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) a live process has used so far, its reaped children's too."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    # fields[11:15] are utime, stime, cutime, cstime, in clock ticks
    return sum(int(tick) for tick in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def tree_cpu_seconds(pid: int) -> float:
    """CPU time used so far by a process and its live children."""
    return _summed_over_tree(pid, cpu_seconds)


def machine_busy_seconds() -> float:
    """CPU time every CPU of this machine has spent busy so far (Linux /proc/stat): what
    the bench's own processes, the database, the broker and anything else used."""
    fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(f) for f in fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def processes_cpu_seconds(name: str) -> float:
    """CPU time used so far by every live process whose command is `name` (the database
    server's processes, which are not the bench's children)."""
    total = 0.0
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if stat.split("(", 1)[1].rsplit(")", 1)[0] == name:
            fields = stat.rsplit(")", 1)[1].split()
            total += sum(int(tick) for tick in fields[11:13]) / os.sysconf("SC_CLK_TCK")
    return total


def seed_audit_events(count: int, *, every_seconds: int = 60) -> None:
    """`count` events, one every `every_seconds` back from now (a million a minute apart
    is two years of a busy platform), in one statement: a Python loop would spend minutes
    on a million rows."""
    from django.db import connection

    from tenants.models import AuditEvent, Tenant

    if count <= 0:
        return
    table = AuditEvent._meta.db_table
    tenant_ids = list(Tenant.objects.order_by("pk").values_list("pk", flat=True))
    columns = (
        "actor_label, action, object_type, object_id, object_repr, tenant_id, after, "
        "source_ip, created_at"
    )
    values = (
        f"'user' || (n %% 50), {_pick('n', list(ACTIONS))}, 'tenants.request', "
        f"CAST(n / 3 AS TEXT), 'request ' || (n / 3), {_pick('n', tenant_ids)}, "
        "'{\"reason\": \"seeded\"}', '10.0.0.1'"
    )
    insert = f"INSERT INTO {table} ({columns}) SELECT {values}"
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                f"{insert}, now() - n * %s * interval '1 second' FROM generate_series(1, %s) AS n",
                [every_seconds, count],
            )
            cursor.execute(f"ANALYZE {table}")
        else:
            numbers = "WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < %s)"
            cursor.execute(
                f"{numbers} {insert}, "
                "strftime('%%Y-%%m-%%d %%H:%%M:%%f', 'now', '-' || (n * %s) || ' seconds') "
                "FROM s",
                [count, every_seconds],
            )


# A request's life as the log tells it, three events a request (n, n+1, n+2 name request
# n/3; the larger n, the older the event): what the dashboard reads.
ACTIONS = ("'request.mark_ready'", "'request.approve'", "'request.submit'")


def _pick(number: str, choices: list) -> str:
    """SQL choosing one of `choices` (SQL literals) by `number`, round robin."""
    cases = " ".join(f"WHEN {index} THEN {choice}" for index, choice in enumerate(choices))
    return f"CASE ({number}) %% {len(choices)} {cases} END"  # %%: the statement has parameters


def seed_namespace_requests(count: int, *, states: tuple[str, ...], prefix: str) -> list:
    """`count` namespace requests over the demo's tenants and two requesters, their states
    taken round robin from `states`, in a few bulk inserts; returns them."""
    from tenants.models import Request, Tenant, User

    tenants = list(Tenant.objects.order_by("pk"))
    people = list(User.objects.filter(username__in=["dev", "sam"]))
    return Request.objects.bulk_create(
        (
            Request(
                tenant=tenants[index % len(tenants)],
                requester=people[index % len(people)],
                kind="namespace",
                state=states[index % len(states)],
                payload={
                    "app": f"{prefix}{index:06d}",
                    "tier": "dev",
                    "cluster": "sandbox",
                    "cpu_millis": 100,
                    "memory_mib": 128,
                    "storage_gib": 0,
                },
                policy_rule="bench",
                status_message="Seeded by a bench.",
            )
            for index in range(count)
        ),
        batch_size=2000,
    )
