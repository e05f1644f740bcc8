"""The platform admins' dashboard: requests per state now, and over the last 30 days how
long decisions and provisioning took and why runs failed; the oldest request waiting.

Times come from the audit log, which records every move of a request with its moment:
submit → first decision by a person (approve or reject; approvals by policy are not a
wait), approval (or the submission policy approved) → ready. Four queries, whatever the
number of requests."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from django.db.models import Count
from django.utils import timezone

from tenants.choices import RequestState
from tenants.models import AuditEvent, Request

WINDOW_DAYS = 30
REQUEST_TYPE = Request._meta.label_lower

# Failure messages → the cause a platform admin would name; the first that matches wins.
FAILURE_CAUSES = (
    (re.compile(r"cluster unreachable|timed out|connection", re.I), "cluster unreachable"),
    (re.compile(r"repository|git ", re.I), "GitOps repository"),
    (re.compile(r"\b403\b|forbidden", re.I), "refused by the API server (403)"),
    (re.compile(r"\b422\b|invalid", re.I), "invalid object (422)"),
    (re.compile(r"\b409\b|conflict", re.I), "conflict with another owner (409)"),
    (re.compile(r"\b5\d\d\b", re.I), "API server error (5xx)"),
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
    return " ".join(f"{count}{unit}" for count, unit in counts[first:first + 2] if count) or "0s"


def percentile(values: list[float], percent: int) -> float | None:
    """Nearest-rank percentile: a value that was actually seen."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, -(-percent * len(ordered) // 100))  # ceil
    return ordered[rank - 1]


def _daily(samples: list[tuple[datetime, float]], days: list) -> list[dict]:
    """Per day of the window: the median of that day's samples, as a bar's height."""
    by_day: dict = {day: [] for day in days}
    for moment, seconds in samples:
        day = timezone.localdate(moment)
        if day in by_day:
            by_day[day].append(seconds)
    medians = {day: percentile(values, 50) for day, values in by_day.items()}
    top = max([m for m in medians.values() if m is not None], default=0) or 1
    rows = []
    for index, day in enumerate(days):
        median = medians[day]
        height = round(median * 100 / top, 2) if median is not None else 0
        rows.append({
            "day": day, "count": len(by_day[day]), "median": median,
            "median_text": readable_duration(median) if median is not None else "—",
            # The bar in a 300 × 100 drawing: ten units a day, the longest day full height.
            "x": index * 10 + 1, "y": round(100 - height, 2), "height": height,
        })
    return rows


def _summary(samples: list[tuple[datetime, float]], days: list) -> dict:
    values = [seconds for _, seconds in samples]
    p50, p90 = percentile(values, 50), percentile(values, 90)
    return {
        "count": len(values),
        "p50": readable_duration(p50) if p50 is not None else "—",
        "p90": readable_duration(p90) if p90 is not None else "—",
        "days": _daily(samples, days),
    }


def admin_dashboard(now: datetime | None = None) -> dict:
    now = now or timezone.now()
    since = now - timedelta(days=WINDOW_DAYS)
    today = timezone.localdate(now)
    days = [today - timedelta(days=offset) for offset in range(WINDOW_DAYS - 1, -1, -1)]

    counts = dict(Request.objects.order_by().values_list("state").annotate(n=Count("id")))
    states = [{"state": value, "label": label, "count": counts.get(value, 0)}
              for value, label in RequestState.choices]
    top_state = max([row["count"] for row in states], default=0) or 1
    for row in states:
        row["width"] = round(row["count"] * 100 / top_state, 2)

    recent = list(AuditEvent.objects.filter(
        object_type=REQUEST_TYPE, created_at__gte=since,
        action__in=("request.approve", "request.reject", "request.mark_ready",
                    "request.mark_failed"),
    ).order_by("created_at", "id").values("object_id", "action", "actor_id", "after",
                                           "created_at"))
    ids = {event["object_id"] for event in recent}
    # When each of those requests was submitted and approved, however long ago.
    earlier: dict[tuple[str, str], list] = {}
    for event in AuditEvent.objects.filter(
        object_type=REQUEST_TYPE, object_id__in=ids,
        action__in=("request.submit", "request.approve"),
    ).order_by("created_at", "id").values("object_id", "action", "actor_id", "after",
                                           "created_at"):
        earlier.setdefault((event["object_id"], event["action"]), []).append(event)

    lead, provisioning, failures = [], [], {}
    decided: set[str] = set()
    for event in recent:
        request_id, action, moment = event["object_id"], event["action"], event["created_at"]
        submitted = earlier.get((request_id, "request.submit"), [None])[0]
        if action in ("request.approve", "request.reject") and event["actor_id"] \
                and request_id not in decided and submitted:
            decided.add(request_id)
            lead.append((moment, (moment - submitted["created_at"]).total_seconds()))
        elif action == "request.mark_ready":
            approvals = [e for e in earlier.get((request_id, "request.approve"), [])
                         if e["created_at"] <= moment]
            if approvals:
                approved = approvals[-1]["created_at"]
            elif submitted and (submitted["after"] or {}).get("state") == RequestState.APPROVED:
                approved = submitted["created_at"]  # approved by policy as it was submitted
            else:
                continue
            provisioning.append((moment, (moment - approved).total_seconds()))
        elif action == "request.mark_failed":
            cause = failure_cause((event["after"] or {}).get("message", ""))
            failures[cause] = failures.get(cause, 0) + 1

    failure_rows = sorted(failures.items(), key=lambda item: (-item[1], item[0]))
    top_failure = max(failures.values(), default=0) or 1
    oldest = (Request.objects.filter(state=RequestState.SUBMITTED)
              .select_related("tenant", "requester").order_by("created_at", "id").first())
    return {
        "since": since,
        "days": days,
        "states": states,
        "lead_time": _summary(lead, days),
        "provisioning_time": _summary(provisioning, days),
        "failures": [{"cause": cause, "count": count,
                      "width": round(count * 100 / top_failure, 2)}
                     for cause, count in failure_rows],
        "oldest_waiting": oldest,
        "oldest_waited": readable_duration((now - oldest.created_at).total_seconds())
        if oldest else "",
    }
