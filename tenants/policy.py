"""Approval policy: ordered rules with CEL conditions, the first match decides.

CEL (the Common Expression Language Kubernetes uses for admission policies) is evaluated
with cel-python. A rule sees one variable, `request`, with these attributes:

    request.kind             namespace | project | environment | quota_change | decommission |
                             access |
                             ephemeral (ending one is never held for approval) |
                             tenant_sync (the tenant's objects on a cluster, after a change
                             to the tenant) | project_decommission | tenant_decommission |
                             deploy_token (a pipeline's token for one namespace: a rule
                             that denies it refuses it; otherwise the tier's setting
                             decides, as nobody approves a token a pipeline waits for)
    request.tenant           the tenant's slug
    request.tier             the most sensitive tier the request touches ("prod" over "dev")
    request.tiers            every tier it touches (a project spans several)
    request.cluster          the target cluster's name
    request.cpu_millis, request.memory_mib, request.storage_gib    what it adds or sets
    request.ephemeral        true for review apps and other expiring environments
    request.requester        the requester's username
    request.requester_role   "owner" | "member" | "viewer" | "" in this tenant
    request.requester_groups the groups claim at the requester's last sign-in
    request.requester_platform_admin  true when a platform admin asks (or Berth asks after
                             a platform admin changed the tenant)
    request.access_role      access (a person asking for a role on one namespace, for a
                             while): the role asked, "owner" | "member" | "viewer" | the
                             tier's elevated role ("prod-edit"); "" for other kinds
    request.access_minutes   access: for how long, in minutes; 0 for other kinds
    request.sleep_mode       sleep (a namespace's sleep schedule): "tier" | "custom" |
                             "never"; "" for other kinds
    request.sleep_within_tier  sleep: true when the schedule is one the namespace's tier
                             lets its owners set themselves

Budgets are enforced before rules are consulted: a request beyond the tenant's budget is
refused at submission, so every request a rule sees fits.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from celpy import CELEvalError

from tenants import cel
from tenants.choices import ApproverRole, PolicyOutcome
from tenants.models import ApprovalRule

SAMPLE_ATTRIBUTES: dict[str, Any] = {
    "kind": "namespace",
    "tenant": "payments",
    "tier": "dev",
    "tiers": ["dev"],
    "cluster": "sandbox",
    "cpu_millis": 1000,
    "memory_mib": 1024,
    "storage_gib": 0,
    "ephemeral": False,
    "requester": "dev",
    "requester_role": "member",
    "requester_groups": ["payments-devs"],
    "requester_platform_admin": False,
    "access_role": "",
    "access_minutes": 0,
    "sleep_mode": "",
    "sleep_within_tier": False,
}
FALLBACK = "no-rule-matched"


class PolicyError(ValueError):
    """A rule's condition does not compile or cannot be evaluated."""


@dataclass(frozen=True)
class PolicyDecision:
    rule: str
    outcome: str
    approvals_required: int = 1
    approver_role: str = ApproverRole.PLATFORM_ADMIN
    message: str = ""
    # Why the deciding rule failed on this request, when it did (the decision is then closed).
    failed: str = ""


@functools.lru_cache(maxsize=512)
def compile_condition(condition: str):
    """Compile and try the condition on sample attributes; raise PolicyError if it fails."""
    return cel.compile_checked(
        condition,
        sample={"request": SAMPLE_ATTRIBUTES},
        what="The condition",
        allowed="it may only use these attributes of request: "
        + ", ".join(sorted(SAMPLE_ATTRIBUTES)),
        error=PolicyError,
    )


def _evaluate(program, attributes: dict[str, Any]):
    return cel.evaluate(program, {"request": attributes})


def matches(condition: str, attributes: dict[str, Any]) -> bool:
    result = _evaluate(compile_condition(condition), attributes)
    if isinstance(result, CELEvalError):
        raise PolicyError(f"The condition failed on this request: {cel.describe(result)}")
    return bool(result)


def decide(attributes: dict[str, Any]) -> PolicyDecision:
    """The first enabled rule whose condition holds decides; none → a platform admin does.
    A rule that fails on this request (an error, or past its evaluation budget) decides
    too, closed: a platform admin approves, told which rule failed and why."""
    for rule in ApprovalRule.objects.filter(enabled=True).order_by("position", "id"):
        try:
            matched = matches(rule.condition, attributes)
        except PolicyError as exc:
            return PolicyDecision(
                rule=rule.name,
                outcome=PolicyOutcome.REQUIRE,
                failed=f"Rule {rule.name} failed on this request, so a platform admin "
                f"decides: {exc}",
            )
        if matched:
            return PolicyDecision(
                rule=rule.name,
                outcome=rule.outcome,
                approvals_required=max(rule.approvals_required, 1),
                approver_role=rule.approver_role,
                message=rule.message,
            )
    return PolicyDecision(rule=FALLBACK, outcome=PolicyOutcome.REQUIRE)


def attributes_for(*, tenant, kind: str, payload: dict[str, Any], requester) -> dict[str, Any]:
    """The `request` variable rules see, from a validated payload."""
    from tenants.kinds import Target, kind_for
    from tenants.models import EnvironmentTier, Namespace
    from tenants.selectors.attributes import rule_attributes

    declared = kind_for(kind)
    if declared.target is Target.NAMESPACE:
        namespace = Namespace.objects.select_related("tier", "cluster").get(
            tenant=tenant, name=payload["namespace"], state="active"
        )
        tier_slugs, cluster, ephemeral = (
            [namespace.tier.slug],
            namespace.cluster.name,
            bool(namespace.tier.is_ephemeral),
        )
    elif declared.target is Target.CLUSTER:
        # Every tier the tenant (or the project) has on the cluster: what the request touches.
        live = Namespace.objects.filter(
            tenant=tenant, cluster__name=payload["cluster"], state__in=("pending", "active")
        )
        live = declared.on_cluster(live, payload)
        tier_slugs = sorted(set(live.values_list("tier__slug", flat=True)))
        cluster, ephemeral = payload["cluster"], False
    else:
        tier_slugs = declared.asked_tiers(payload)
        cluster = payload["cluster"]
        ephemeral = EnvironmentTier.objects.filter(slug__in=tier_slugs, is_ephemeral=True).exists()
    ordered = list(
        EnvironmentTier.objects.filter(slug__in=tier_slugs)
        .order_by("position")
        .values_list("slug", flat=True)
    )
    return rule_attributes(
        kind=kind,
        tenant=tenant,
        tiers=ordered,
        cluster=cluster,
        amounts=declared.demand(tenant=tenant, payload=payload),
        ephemeral=ephemeral,
        requester=requester,
        access=declared.rule_attributes(payload),
    )


DEPLOY_TOKEN = "deploy_token"  # noqa: S105 - what rules see as request.kind


def deploy_token_attributes(*, namespace, requester) -> dict[str, Any]:
    """The `request` variable rules see when someone mints a deploy token: its namespace's
    tier and cluster, what the namespace holds, who asks."""
    from tenants.selectors.attributes import rule_attributes

    return rule_attributes(
        kind=DEPLOY_TOKEN,
        tenant=namespace.tenant,
        tiers=[namespace.tier.slug],
        cluster=namespace.cluster.name,
        amounts=namespace,
        ephemeral=bool(namespace.tier.is_ephemeral),
        requester=requester,
    )
