"""What a policy what-if replays: the rules in force, and past decisions with the `request`
attributes the rules saw (tenants.whatif replays them, purely).

Requests record those attributes since they were kept; denials keep them in their audit
event. For older ones they are reconstructed from the payload and today's records (the
namespace a quota change touched, the requester's role and groups now): marked
`reconstructed`, since they may differ from what the rules saw then.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from tenants.choices import Decision, PolicyOutcome
from tenants.decisions import REPLAY_LIMIT, Outcome, PastDecision, ProposedRule
from tenants.kinds import Target, kind_for, kinds_where
from tenants.models import (
    Approval,
    ApprovalRule,
    AuditEvent,
    EnvironmentTier,
    Membership,
    Namespace,
    Request,
    Tenant,
    User,
)
from tenants.selectors.attributes import rule_attributes

# Decided by Berth, never by the rules: nothing to replay.
NOT_BY_RULES = kinds_where(decided_by_rules=False)


def rules_in_force() -> list[ProposedRule]:
    """The saved approval rules, in the order they are evaluated, as a proposal."""
    return [_proposed(rule) for rule in ApprovalRule.objects.order_by("position", "id")]


def rules_with_edit(*, pk: int | None, rule: ProposedRule, position: int) -> list[ProposedRule]:
    """The rules in force with one rule edited (`pk`) or added (None) at `position`: what
    saving the rule form would put in force, in the order it would be evaluated."""
    rows = [
        (saved.position, saved.pk, _proposed(saved))
        for saved in ApprovalRule.objects.exclude(pk=pk).order_by("position", "id")
    ]
    # A new rule is evaluated after the saved ones at its position (its id is the highest).
    rows.append((position, pk if pk is not None else float("inf"), rule))
    return [proposed for _, _, proposed in sorted(rows, key=lambda row: row[:2])]


def _proposed(rule: ApprovalRule) -> ProposedRule:
    return ProposedRule(
        name=rule.name,
        condition=rule.condition,
        outcome=rule.outcome,
        approvals_required=rule.approvals_required,
        approver_role=rule.approver_role,
        message=rule.message,
        enabled=rule.enabled,
    )


def past_decisions(
    *,
    tenant: Tenant | None = None,
    kind: str = "",
    since: datetime | None = None,
    limit: int = REPLAY_LIMIT,
) -> list[PastDecision]:
    """The last `limit` decisions of the rules, newest first: admitted requests and
    denials, filtered by tenant, kind and time."""
    requests = Request.objects.exclude(kind__in=NOT_BY_RULES).exclude(policy_rule="")
    denials = AuditEvent.objects.filter(action="request.denied")
    if tenant is not None:
        requests, denials = requests.filter(tenant=tenant), denials.filter(tenant=tenant)
    if kind:
        requests, denials = requests.filter(kind=kind), denials.filter(after__kind=kind)
    if since is not None:
        requests = requests.filter(created_at__gte=since)
        denials = denials.filter(created_at__gte=since)
    requests = list(
        requests.select_related("tenant", "requester").order_by("-created_at", "-id")[:limit]
    )
    denials = list(denials.select_related("tenant", "actor").order_by("-created_at", "-id")[:limit])
    automatic = set(
        Approval.objects.filter(
            request__in=requests,
            approver=None,
            decision=Decision.APPROVE,
        ).values_list("request_id", flat=True)
    )
    found = Reconstruction()
    past = [_admitted(each, each.pk in automatic, found) for each in requests]
    past += [decision for event in denials if (decision := _denied(event, found))]
    past.sort(key=lambda each: each.decided_at, reverse=True)
    return past[:limit]


def _admitted(request: Request, automatic: bool, found: Reconstruction) -> PastDecision:
    decided = Outcome(
        rule=request.policy_rule,
        outcome=PolicyOutcome.AUTO_APPROVE if automatic else PolicyOutcome.REQUIRE,
        approvals_required=request.approvals_required,
        approver_role=request.approver_role,
    )
    attributes = request.policy_attributes
    reconstructed = attributes is None
    if reconstructed:
        attributes = found.attributes(
            tenant=request.tenant,
            kind=request.kind,
            payload=request.payload,
            requester=request.requester,
        )
    return PastDecision(
        tenant=request.tenant.slug,
        kind=request.kind,
        decided_at=request.created_at,
        attributes=attributes,
        decided=decided,
        request_id=request.pk,
        reconstructed=reconstructed,
    )


def _denied(event: AuditEvent, found: Reconstruction) -> PastDecision | None:
    after = event.after or {}
    if event.tenant is None or not after.get("kind"):
        return None
    attributes = after.get("attributes")
    reconstructed = attributes is None
    if reconstructed:
        if event.actor is None:
            return None
        attributes = found.attributes(
            tenant=event.tenant,
            kind=after["kind"],
            payload=after.get("payload") or {},
            requester=event.actor,
        )
    return PastDecision(
        tenant=event.tenant.slug,
        kind=after["kind"],
        decided_at=event.created_at,
        attributes=attributes,
        decided=Outcome(rule=str(after.get("rule", "")), outcome=PolicyOutcome.DENY),
        event_id=event.pk,
        reconstructed=reconstructed,
    )


class Reconstruction:
    """policy.attributes_for, as well as today's records allow, for a decision made before
    its attributes were kept; what it reads once it keeps (tiers, roles)."""

    def __init__(self) -> None:
        self._tiers: dict[str, tuple[int, bool]] | None = None
        self._roles: dict[tuple[int, int], str] = {}

    def tiers(self) -> dict[str, tuple[int, bool]]:
        if self._tiers is None:
            self._tiers = {
                slug: (position, ephemeral)
                for slug, position, ephemeral in EnvironmentTier.objects.values_list(
                    "slug", "position", "is_ephemeral"
                )
            }
        return self._tiers

    def role(self, tenant: Tenant, user: User) -> str:
        key = (tenant.pk, user.pk)
        if key not in self._roles:
            self._roles[key] = (
                Membership.objects.filter(tenant=tenant, user=user)
                .values_list("role", flat=True)
                .first()
                or ""
            )
        return self._roles[key]

    def attributes(
        self, *, tenant: Tenant, kind: str, payload: dict[str, Any], requester: User
    ) -> dict[str, Any]:
        tiers, cluster, ephemeral = self._where(tenant, kind, payload)
        return rule_attributes(
            kind=kind,
            tenant=tenant,
            tiers=tiers,
            cluster=cluster,
            amounts=kind_for(kind).replayed_demand(tenant=tenant, payload=payload),
            ephemeral=ephemeral,
            requester=requester,
            role=self.role(tenant, requester),
            access=_replayed_access(kind, payload),
        )

    def _where(
        self, tenant: Tenant, kind: str, payload: dict[str, Any]
    ) -> tuple[list[str], str, bool]:
        known = self.tiers()
        declared = kind_for(kind)
        if declared.target is Target.NAMESPACE:
            namespace = self._namespace(tenant, payload.get("namespace", ""))
            if namespace is None:
                return [], "", False
            slugs, cluster = [namespace.tier.slug], namespace.cluster.name
        elif declared.target is Target.CLUSTER:
            cluster = str(payload.get("cluster", ""))
            touched = declared.on_cluster(
                Namespace.objects.filter(tenant=tenant, cluster__name=cluster), payload
            )
            slugs = list(set(touched.values_list("tier__slug", flat=True)))
            return sorted(slugs, key=lambda slug: known.get(slug, (0, False))[0]), cluster, False
        else:
            slugs = declared.asked_tiers(payload)
            cluster = str(payload.get("cluster", ""))
        slugs = sorted((slug for slug in slugs if slug in known), key=lambda slug: known[slug][0])
        return slugs, cluster, any(known[slug][1] for slug in slugs)

    def _namespace(self, tenant: Tenant, name: str) -> Namespace | None:
        return (
            Namespace.objects.filter(tenant=tenant, name=name)
            .select_related("tier", "cluster")
            .order_by("-created_at")
            .first()
        )


def _replayed_access(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    """What an access request showed the rules, from its stored payload (a payload from
    before a key existed shows its empty value)."""
    declared = kind_for(kind)
    if declared.sets_sleep_schedule and {"mode", "namespace", "cluster"} <= payload.keys():
        return declared.rule_attributes(payload)
    if not declared.grants_access:
        return {}
    return {"access_role": payload.get("role", ""), "access_minutes": payload.get("minutes", 0)}
