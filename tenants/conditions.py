"""What a reconcile came to, typed: an `Outcome` (Ready, Progressing, Waiting with a reason
and a retry time, Failed with a reason; or nothing to do, or busy elsewhere) and the
Kubernetes-style conditions it leaves on a request or a namespace (type, status, reason,
message, lastTransitionTime), which pages and the API read. Control flow reads the phase,
never a message."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.utils import timezone


class Phase(enum.StrEnum):
    READY = "Ready"
    PROGRESSING = "Progressing"
    WAITING = "Waiting"
    FAILED = "Failed"
    RETURNED = "Returned"  # back to its requester or to approval: a person acts next
    IDLE = "Idle"  # nothing to do (done already, or not this worker's)
    BUSY = "Busy"  # another worker holds it


class Reason(enum.StrEnum):
    """Why a reconcile is where it is: the conditions' `reason`, and what a waiting request
    is woken by (a guardrails install wakes those waiting for guardrails, only those)."""

    RECONCILED = "Reconciled"
    PLAN_ONLY = "PlanOnly"
    APPLYING = "Applying"
    GUARDRAILS = "GuardrailsNotVerified"
    CLUSTER_UNREACHABLE = "ClusterUnreachable"
    REPOSITORY_UNREACHABLE = "RepositoryUnreachable"
    AWAITING_MERGE = "AwaitingMerge"
    KEY_BUSY = "KeyBusy"
    REFUSED = "Refused"
    INVALID = "Invalid"
    UNRENDERABLE = "Unrenderable"
    MOVED = "MovedSinceApproval"
    GAVE_UP = "GaveUp"
    NOTHING = "NothingToDo"


@dataclass(frozen=True)
class Outcome:
    phase: Phase
    reason: Reason = Reason.RECONCILED
    message: str = ""
    retry_at: datetime | None = None

    def __str__(self) -> str:
        """As logs and the task's result say it: `ready`, `waiting: <why>`, …"""
        word = {
            Phase.READY: "ready",
            Phase.PROGRESSING: "progressing",
            Phase.WAITING: "waiting",
            Phase.FAILED: "failed",
            Phase.RETURNED: "returned",
            Phase.IDLE: "nothing to do",
            Phase.BUSY: "busy",
        }[self.phase]
        if self.phase is Phase.READY:
            return word if not self.message else f"{word} ({self.message})"
        return f"{word}: {self.message}" if self.message else word

    @property
    def waiting(self) -> bool:
        return self.phase is Phase.WAITING


def ready(message: str = "", reason: Reason = Reason.RECONCILED) -> Outcome:
    return Outcome(Phase.READY, reason, message)


def waiting(reason: Reason, message: str, retry_at: datetime | None = None) -> Outcome:
    return Outcome(Phase.WAITING, reason, message, retry_at)


def failed(reason: Reason, message: str) -> Outcome:
    return Outcome(Phase.FAILED, reason, message)


def idle(message: str) -> Outcome:
    return Outcome(Phase.IDLE, Reason.NOTHING, message)


def busy(message: str) -> Outcome:
    return Outcome(Phase.BUSY, Reason.KEY_BUSY, message)


def returned(reason: Reason, message: str) -> Outcome:
    return Outcome(Phase.RETURNED, reason, message)


# Condition types, each True/False; `Ready` is the one a page shows first.
TYPES = ("Ready", "Progressing", "Waiting", "Failed")


def conditions_for(outcome: Outcome, before: list[dict[str, Any]] | None = None) -> list[dict]:
    """The conditions an outcome leaves, a condition's lastTransitionTime kept where its
    status did not change (as Kubernetes does)."""
    now = timezone.now().isoformat(timespec="seconds")
    previous = {c.get("type"): c for c in before or []}
    truth = {
        "Ready": outcome.phase is Phase.READY,
        "Progressing": outcome.phase is Phase.PROGRESSING,
        "Waiting": outcome.phase is Phase.WAITING,
        "Failed": outcome.phase is Phase.FAILED,
    }
    found = []
    for kind in TYPES:
        status = "True" if truth[kind] else "False"
        was = previous.get(kind) or {}
        condition = {
            "type": kind,
            "status": status,
            "reason": str(outcome.reason),
            "message": outcome.message[:1000],
            "lastTransitionTime": was.get("lastTransitionTime", now)
            if was.get("status") == status
            else now,
        }
        if kind == "Waiting" and truth[kind] and outcome.retry_at is not None:
            condition["retryAt"] = outcome.retry_at.isoformat(timespec="seconds")
        found.append(condition)
    return found


def condition(conditions: list[dict[str, Any]], kind: str) -> dict[str, Any] | None:
    return next((c for c in conditions or [] if c.get("type") == kind), None)


def is_true(conditions: list[dict[str, Any]], kind: str) -> bool:
    found = condition(conditions, kind)
    return bool(found and found.get("status") == "True")
