"""The platform admins' dashboard: requests per state now, and over the last 30 days how
long decisions and provisioning took and why runs failed; the oldest request waiting.

Times come from the audit log, which records every move of a request with its moment:
submitted (or returned to approval) → decided by a person (approve or reject; approvals by
policy are not a wait), approved (or approved by policy as submitted) → ready. A fixed
number of queries, whatever the number of requests; each past day's figures are kept in the
cache and read again only when an event was added to that day."""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta
from typing import Any

from django.core.cache import cache
from django.db.models import Count, Max, Q, QuerySet
from django.db.models.fields.json import KT
from django.db.models.functions import TruncDate
from django.utils import timezone

from tenants.choices import NamespaceState, RequestState
from tenants.models import AuditEvent, Namespace, Request

WINDOW_DAYS = 30
REQUEST_TYPE = Request._meta.label_lower

# How the provisioner words a failed run (provisioning/reconcile/runs.py and git_step.py,
# provisioning/kube/errors.py: mostly "<object>: <why>", the API's status first in <why>), mapped
# to the cause a platform admin would name. The first match wins, so the GitOps step's own
# outage ("... connection failed or timed out") is not taken for the cluster's.
FAILURE_CAUSES = (
    (re.compile(r"^The plan failed validation"), "plan failed validation"),
    (re.compile(r"^GitOps commit .*: repository unreachable"), "GitOps repository unreachable"),
    (re.compile(r"^GitOps commit "), "GitOps commit refused"),
    (re.compile(r"cluster unreachable"), "cluster unreachable"),
    (re.compile(r"the cluster's (settings|credentials)"), "cluster settings or credentials"),
    (re.compile(r"is still terminating after"), "namespace still terminating"),
    (re.compile(r"not labelled as Berth's"), "object not Berth's"),
    (re.compile(r": 40[13]\b"), "refused by the API server (401/403)"),
    (re.compile(r": 409\b"), "conflict with another owner (409)"),
    (re.compile(r": 422\b"), "invalid object (422)"),
    (re.compile(r": 5\d\d\b"), "API server error (5xx)"),
    (re.compile(r": 4\d\d\b"), "other API refusal (4xx)"),
)


def failure_cause(message: str) -> str:
    for pattern, cause in FAILURE_CAUSES:
        if pattern.search(message or ""):
            return cause
    return "other"


def readable_duration(seconds: float) -> str:
    """45s, 12m 30s, 3h 5m, 2d 4h: the largest unit and the next, as people read a wait."""
    remaining = int(round(seconds))
    counts = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        count, remaining = divmod(remaining, size)
        counts.append((count, unit))
    first = next((i for i, (count, _) in enumerate(counts) if count), len(counts) - 1)
    return " ".join(f"{count}{unit}" for count, unit in counts[first : first + 2] if count) or "0s"


def percentile(values: list[float], percent: int) -> float | None:
    """Nearest-rank percentile: a value that was actually seen."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, -(-percent * len(ordered) // 100))  # ceil
    return ordered[rank - 1]


# Steps a duration axis may count in, in seconds: each a whole number of the units
# readable_duration writes, so no two ticks read the same.
NICE_STEPS = (
    1,
    2,
    5,
    10,
    15,
    30,
    60,
    120,
    300,
    600,
    900,
    1800,
    3600,
    7200,
    10800,
    21600,
    43200,
    86400,
    172800,
    432000,
    864000,
)
MOST_TICK_STEPS = 4


def nice_scale(longest: float) -> tuple[int, int]:
    """(step, top) of an axis from 0 past `longest`: the smallest nice step that reaches it
    in at most MOST_TICK_STEPS steps, and the top it reaches."""
    for step in NICE_STEPS:
        count = max(1, -(-int(longest * 1000) // (step * 1000)))  # ceil, to the millisecond
        if count <= MOST_TICK_STEPS:
            return step, step * count
    step = NICE_STEPS[-1] * -(-int(longest) // (NICE_STEPS[-1] * MOST_TICK_STEPS))
    return step, step * max(1, -(-int(longest) // step))


def _daily(samples: list[tuple[date, float]], days: list) -> tuple[list[dict], int, int]:
    """Per day of the window: the median of that day's samples, as a bar's height; and the
    axis' step and top, a nice duration at or above the longest median."""
    by_day: dict = {day: [] for day in days}
    for day, seconds in samples:
        if day in by_day:
            by_day[day].append(seconds)
    medians = {day: percentile(values, 50) for day, values in by_day.items()}
    step, top = nice_scale(max([m for m in medians.values() if m is not None], default=0))
    rows = []
    for index, day in enumerate(days):
        median = medians[day]
        height = round(median * 100 / top, 2) if median is not None else 0
        rows.append(
            {
                "day": day,
                "count": len(by_day[day]),
                "median": median,
                "median_text": readable_duration(median) if median is not None else "—",
                # The bar in a 300 × 100 drawing: ten units a day, the axis' top full height.
                "x": index * 10 + 1,
                "y": round(100 - height, 2),
                "height": height,
                # A date under every seventh day back from today, clear of the two ends'.
                "tick": (len(days) - 1 - index) % 7 == 0 and 3 < index < len(days) - 4,
            }
        )
    return rows, step, top


def _tick(at: int, top: int) -> dict:
    y = round(100 - at * 100 / top, 2)
    # The label's baseline a little below the line, so the line runs through its middle.
    return {"label": readable_duration(at) if at else "0", "y": y, "text_y": y + 2.5}


def _summary(samples: list[tuple[date, float]], days: list) -> dict:
    values = [seconds for _, seconds in samples]
    p50, p90 = percentile(values, 50), percentile(values, 90)
    rows, step, top = _daily(samples, days)
    return {
        "count": len(values),
        "p50": readable_duration(p50) if p50 is not None else "—",
        "p90": readable_duration(p90) if p90 is not None else "—",
        "days": rows,
        # The y-axis: a tick every `step` from 0 to the top, at its height in the drawing.
        "top": readable_duration(top) if values else "",
        "ticks": [_tick(at, top) for at in range(0, top + 1, step)] if values else [],
    }


def admin_dashboard(now: datetime | None = None) -> dict:
    now = now or timezone.now()
    today = timezone.localdate(now)
    days = [today - timedelta(days=offset) for offset in range(WINDOW_DAYS - 1, -1, -1)]
    since = datetime.combine(days[0], time.min, tzinfo=timezone.get_current_timezone())

    counts = dict(Request.objects.order_by().values_list("state").annotate(n=Count("id")))
    states = [
        {"state": value, "label": label, "count": counts.get(value, 0)}
        for value, label in RequestState.choices
    ]
    top_state = max([row["count"] for row in states], default=0) or 1
    for row in states:
        row["width"] = round(row["count"] * 100 / top_state, 2)

    moves = moves_by_day(since)
    lead = [(day, seconds) for day in days for seconds in moves.get(day, NO_MOVES)["lead"]]
    provisioning = [
        (day, seconds) for day in days for seconds in moves.get(day, NO_MOVES)["provisioning"]
    ]
    failures: dict[str, int] = {}
    for day in days:
        for cause, count in moves.get(day, NO_MOVES)["failures"].items():
            failures[cause] = failures.get(cause, 0) + count

    failure_rows = sorted(failures.items(), key=lambda item: (-item[1], item[0]))
    top_failure = max(failures.values(), default=0) or 1
    oldest = (
        Request.objects.filter(state=RequestState.SUBMITTED)
        .select_related("tenant", "requester")
        .order_by("created_at", "id")
        .first()
    )
    return {
        "since": since,
        "days": days,
        "states": states,
        "lead_time": _summary(lead, days),
        "provisioning_time": _summary(provisioning, days),
        "failures": [
            {"cause": cause, "count": count, "width": round(count * 100 / top_failure, 2)}
            for cause, count in failure_rows
        ],
        "oldest_waiting": oldest,
        "oldest_waited": readable_duration((now - oldest.created_at).total_seconds())
        if oldest
        else "",
    }


def namespaces_asleep() -> dict[str, int]:
    """How many live namespaces their clusters hold asleep now, of how many live ones (one
    query; the dashboard is the platform admins', so every tenant's)."""
    return Namespace.objects.filter(state=NamespaceState.ACTIVE).aggregate(
        asleep=Count("id", filter=Q(asleep=True)), live=Count("id")
    )


ENDS = ("request.approve", "request.reject", "request.mark_ready", "request.mark_failed")
NO_MOVES: dict[str, Any] = {"lead": [], "provisioning": [], "failures": {}}


def moves_by_day(since: datetime) -> dict[date, dict[str, Any]]:
    """Per local day since `since`: the seconds people took to decide, the seconds from
    approval to Ready, and the failures by cause.

    A day's figures depend only on events up to that day, and the log only grows, so each
    day is kept in the cache under a fingerprint of its events (how many, the last id, the
    last moment): a day is read again only when an event was added to it, in practice only
    today. One aggregate query answers which days those are."""
    ends = AuditEvent.objects.filter(
        object_type=REQUEST_TYPE, created_at__gte=since, action__in=ENDS
    )
    fingerprints = (
        ends.annotate(day=TruncDate("created_at"))
        .order_by()
        .values("day")
        .annotate(n=Count("id"), last=Max("id"), latest=Max("created_at"))
    )
    keys = {
        row["day"]: f"dashboard-day-{row['day']}-{row['n']}-{row['last']}-"
        f"{row['latest'].timestamp():.6f}"
        for row in fingerprints
    }
    kept = cache.get_many(list(keys.values()))
    moves = {day: kept[key] for day, key in keys.items() if key in kept}
    missing = sorted(set(keys) - set(moves))
    if missing:
        first = datetime.combine(missing[0], time.min, tzinfo=timezone.get_current_timezone())
        read = _moves(ends.filter(created_at__gte=first))
        fresh = {day: read.get(day, NO_MOVES) for day in missing}
        cache.set_many({keys[day]: fresh[day] for day in missing}, timeout=DAY_KEPT_SECONDS)
        moves.update(fresh)
    return moves


# A day leaves the window after WINDOW_DAYS; kept a day longer than that.
DAY_KEPT_SECONDS = (WINDOW_DAYS + 1) * 86400


def _moves(ends: QuerySet[AuditEvent]) -> dict[date, dict[str, Any]]:
    """The moves of the requests whose decisions, readiness or failures `ends` holds, by
    the local day of that event: the four-query heart of the dashboard."""
    fields = ("object_id", "action", "actor_id", "created_at")
    # Of `after`, only the two keys read below, taken out by the database: decoding every
    # event's whole JSON was most of the page's time with a busy month in the log.
    parts = {"state": KT("after__state"), "message": KT("after__message")}
    recent = list(ends.order_by("created_at", "id").values(*fields, **parts))
    # When those requests started waiting for a person and were approved, however long
    # ago: a subquery, so the window's size never becomes a list of parameters.
    earlier: dict[tuple[str, str], list] = {}
    for event in (
        AuditEvent.objects.filter(
            object_type=REQUEST_TYPE,
            object_id__in=ends.order_by().values("object_id"),
            action__in=("request.submit", "request.return_to_approval", "request.approve"),
        )
        .order_by("created_at", "id")
        .values(*fields, **parts)
    ):
        key = "request.approve" if event["action"] == "request.approve" else "waiting"
        earlier.setdefault((event["object_id"], key), []).append(event)

    def last_before(request_id: str, action: str, moment: datetime) -> dict | None:
        found = [e for e in earlier.get((request_id, action), []) if e["created_at"] <= moment]
        return found[-1] if found else None

    moves: dict[date, dict[str, Any]] = {}
    for event in recent:
        request_id, action, moment = event["object_id"], event["action"], event["created_at"]
        day = moves.setdefault(
            timezone.localdate(moment), {"lead": [], "provisioning": [], "failures": {}}
        )
        if action in ("request.approve", "request.reject"):
            # A decision by a person ends the wait since the request was submitted, or
            # since a changed plan sent it back to approval.
            waiting = last_before(request_id, "waiting", moment)
            if event["actor_id"] and waiting:
                day["lead"].append((moment - waiting["created_at"]).total_seconds())
        elif action == "request.mark_ready":
            approval = last_before(request_id, "request.approve", moment)
            submitted = (earlier.get((request_id, "waiting")) or [None])[0]  # the first wait
            if approval:
                approved = approval["created_at"]
            elif submitted and submitted["state"] == RequestState.APPROVED:
                approved = submitted["created_at"]  # approved by policy as it was submitted
            else:
                continue
            day["provisioning"].append((moment - approved).total_seconds())
        elif action == "request.mark_failed":
            cause = failure_cause(event["message"] or "")
            day["failures"][cause] = day["failures"].get(cause, 0) + 1
    return moves
