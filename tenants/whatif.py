"""Policy what-if: a proposed set of approval rules replayed over past decisions.

Pure: each past decision comes with the `request` attributes the rules saw (or, for
requests decided before those were kept, attributes reconstructed from the payload by
`tenants.selectors.whatif`); the proposed rules are compiled once and evaluated in memory,
with no database inside the loop. Nothing is saved.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from celpy import CELEvalError

from tenants import cel, policy
from tenants.choices import PolicyOutcome
from tenants.decisions import REPLAY_LIMIT, Outcome, PastDecision, ProposedRule

MAX_RULES = 100
# However many rules and decisions, a replay holds a web worker no longer than this (each
# evaluation has its own budget besides: tenants/cel.py).
REPLAY_SECONDS = 5.0


class ReplayTooLong(ValueError):
    """A replay that reached REPLAY_SECONDS before its last decision."""


# Change kinds, in the order pages list them, and how people read them.
CHANGE_LABELS: dict[str, str] = {
    "auto_approve_to_require": "auto-approved → needs approval",
    "auto_approve_to_deny": "auto-approved → denied",
    "require_to_deny": "needs approval → denied",
    "require_to_auto_approve": "needs approval → auto-approved",
    "deny_to_require": "denied → needs approval",
    "deny_to_auto_approve": "denied → auto-approved",
    "approver_changed": "approver changed",
    "error": "a condition fails on it",
}


@dataclass(frozen=True)
class Change:
    past: PastDecision
    change: str
    after: Outcome | None
    error: str = ""

    @property
    def label(self) -> str:
        return CHANGE_LABELS[self.change]


@dataclass
class WhatIf:
    considered: int = 0
    reconstructed: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    changes: list[Change] = field(default_factory=list)

    @property
    def changed(self) -> int:
        return len(self.changes)

    def count_rows(self) -> list[tuple[str, str, int]]:
        """(change kind, as people read it, requests), in the order pages list them."""
        return [(change, CHANGE_LABELS[change], count) for change, count in self.counts.items()]

    def summary(self) -> dict[str, Any]:
        """What the audit event of the save keeps: counts, and which requests changed."""
        return {
            "considered": self.considered,
            "reconstructed": self.reconstructed,
            "changed": self.changed,
            "counts": dict(self.counts),
            "requests": [
                each.past.request_id for each in self.changes if each.past.request_id is not None
            ][:REPLAY_LIMIT],
        }


def rule_problems(rule: ProposedRule) -> dict[str, str]:
    """Field → what is wrong, by the checks the rule form makes before saving a rule."""
    problems = {}
    try:
        policy.compile_condition(rule.condition)
    except policy.PolicyError as exc:
        problems["condition"] = str(exc)
    if rule.outcome == PolicyOutcome.DENY and not rule.message.strip():
        problems["message"] = "A deny rule needs a message telling people why."
    return problems


def proposal_digest(rules: list[ProposedRule]) -> str:
    """Names the proposal: the same rules in the same order give the same digest."""
    canonical = json.dumps([asdict(rule) for rule in rules], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


@dataclass
class _Compiled:
    """A proposed rule ready to evaluate, with its results so far by what it reads."""

    rule: ProposedRule
    program: Any
    # The request attributes its condition reads, or None when it reads `request` whole.
    reads: tuple[str, ...] | None
    results: dict[tuple, Any] = field(default_factory=dict)


def _compile(rules: list[ProposedRule]) -> list[_Compiled]:
    """Every enabled rule with its program, in order; raises policy.PolicyError naming the
    rule whose condition does not compile."""
    compiled = []
    for rule in rules:
        if not rule.enabled:
            continue
        try:
            program = policy.compile_condition(rule.condition)
        except policy.PolicyError as exc:
            raise policy.PolicyError(f"Rule {rule.name}: {exc}") from exc
        reads = cel.attributes_read(rule.condition, "request")
        compiled.append(
            _Compiled(
                rule=rule, program=program, reads=None if reads is None else tuple(sorted(reads))
            )
        )
    return compiled


_ABSENT = object()


def _frozen(value: Any) -> Any:
    """A JSON value as a dictionary key, its type kept (true and 1 are not the same)."""
    if isinstance(value, list):
        return (list, tuple(_frozen(each) for each in value))
    if isinstance(value, dict):
        return (dict, tuple(sorted((key, _frozen(each)) for key, each in value.items())))
    return (type(value), value)


def _decide(compiled: list[_Compiled], attributes: dict[str, Any]) -> Outcome:
    """As policy.decide, over the proposal: the first rule that holds decides. A condition
    gives the same result wherever the attributes it reads are the same, so each is
    evaluated once per distinct combination of them: replaying many requests costs about
    as many evaluations as there are different requests to the rules."""
    converted = None
    for each in compiled:
        key = (
            None
            if each.reads is None
            else tuple(
                _frozen(attributes[name]) if name in attributes else _ABSENT for name in each.reads
            )
        )
        result = each.results.get(key, _ABSENT) if key is not None else _ABSENT
        if result is _ABSENT:
            if converted is None:
                converted = cel.activation({"request": attributes})
            result = cel.evaluate_converted(each.program, converted)
            if key is not None:
                each.results[key] = result
        if isinstance(result, CELEvalError):
            raise policy.PolicyError(
                f"Rule {each.rule.name} fails on this request: {cel.describe(result)}"
            )
        if result:
            rule = each.rule
            return Outcome(
                rule=rule.name,
                outcome=rule.outcome,
                approvals_required=max(rule.approvals_required, 1),
                approver_role=rule.approver_role,
            )
    return Outcome(rule=policy.FALLBACK, outcome=PolicyOutcome.REQUIRE)


def decide_each(rules: list[ProposedRule], requests: list[dict[str, Any]]) -> list[Outcome]:
    """What `rules` decide on each request's attributes."""
    compiled = _compile(rules)
    return [_decide(compiled, attributes) for attributes in requests]


def change_between(before: Outcome, after: Outcome) -> str | None:
    """The change kind (a key of CHANGE_LABELS), or None when the decision is the same
    (another rule deciding alike is no change to the requester)."""
    if before.outcome != after.outcome:
        return f"{before.outcome}_to_{after.outcome}"
    if before.outcome == PolicyOutcome.REQUIRE and (
        before.approver_role != after.approver_role
        or before.approvals_required != after.approvals_required
    ):
        return "approver_changed"
    return None


def replay(rules: list[ProposedRule], past: list[PastDecision]) -> WhatIf:
    """What `rules` would have decided on each of `past`, and what would change."""
    compiled = _compile(rules)
    found = WhatIf(considered=len(past))
    counts: Counter[str] = Counter()
    deadline = time.monotonic() + REPLAY_SECONDS
    for number, each in enumerate(past):
        if time.monotonic() > deadline:
            raise ReplayTooLong(
                f"The replay stopped after {number} of {len(past)} requests: a what-if may "
                f"take {REPLAY_SECONDS:g} s. Replay fewer (a lower limit, a later since, one "
                "tenant or one kind)."
            )
        if each.reconstructed:
            found.reconstructed += 1
        try:
            after = _decide(compiled, each.attributes)
        except policy.PolicyError as exc:
            counts["error"] += 1
            found.changes.append(Change(past=each, change="error", after=None, error=str(exc)))
            continue
        change = change_between(each.decided, after)
        if change is not None:
            counts[change] += 1
            found.changes.append(Change(past=each, change=change, after=after))
    found.counts = {key: counts[key] for key in CHANGE_LABELS if counts[key]}
    return found
