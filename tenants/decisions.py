"""The records a policy what-if replays (tenants.whatif): a proposed rule, what a rule set
decided, and one past decision with the `request` attributes the rules saw. Plain data:
read from the database by tenants.selectors.whatif, evaluated by tenants.whatif."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from tenants.choices import ApproverRole, PolicyOutcome, RequestKind

# Past decisions looked at, at most (the default is the most too: a page stays readable).
REPLAY_LIMIT = 500


@dataclass(frozen=True)
class ProposedRule:
    """One rule of a proposal, in the shape of ApprovalRule (its position is its place)."""

    name: str
    condition: str
    outcome: str
    approvals_required: int = 1
    approver_role: str = ApproverRole.PLATFORM_ADMIN
    message: str = ""
    enabled: bool = True


@dataclass(frozen=True)
class Outcome:
    """What a rule set decided: the rule, and what it asks for."""

    rule: str
    outcome: str
    approvals_required: int = 1
    approver_role: str = ApproverRole.PLATFORM_ADMIN

    def words(self) -> str:
        if self.outcome == PolicyOutcome.AUTO_APPROVE:
            return "auto-approved"
        if self.outcome == PolicyOutcome.DENY:
            return "denied"
        role = (
            ApproverRole(self.approver_role).label.lower()
            if self.approver_role in ApproverRole.values
            else self.approver_role
        )
        return f"needs {self.approvals_required} × {role}"


@dataclass(frozen=True)
class PastDecision:
    """A request as the rules saw it when they decided, and what they decided.

    `request_id` is None for a denied request (denials leave an audit event, `event_id`)."""

    tenant: str
    kind: str
    decided_at: datetime
    attributes: dict[str, Any]
    decided: Outcome
    request_id: int | None = None
    event_id: int | None = None
    reconstructed: bool = False

    @property
    def kind_label(self) -> str:
        return str(RequestKind(self.kind).label) if self.kind in RequestKind.values else self.kind
