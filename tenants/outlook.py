"""What picking a tier on a request form implies, said on the form before anyone submits:
who approves a request for it (the approval rules as they stand, asked as admission asks
them) and whether its GitOps change waits for a pull request to be merged (merge-request
mode: the tier's own setting, else the tenant's, where the tenant has a repository).

A tier is asked about alone and at its default quota, so a rule on several tiers at once
or on a larger quota may still decide otherwise; the form says "as the rules stand".
"""

from __future__ import annotations

from collections.abc import Iterable

from tenants import policy
from tenants.budget import Usage
from tenants.choices import ApproverRole, PolicyOutcome
from tenants.models import EnvironmentTier, Membership, Tenant, User
from tenants.selectors.attributes import rule_attributes

_APPROVERS = {
    ApproverRole.PLATFORM_ADMIN: ("a platform admin", "platform admins"),
    ApproverRole.TENANT_OWNER: ("a tenant owner", "tenant owners"),
}


def by_pull_request(tenant: Tenant, tier: EnvironmentTier) -> bool:
    """Whether a change of this tier's namespaces reaches the tenant's repository through a
    pull request (provisioning.reconcile.pull_requests decides the same way)."""
    if not tenant.gitops_repo_url.strip():
        return False
    own = tier.changes_by_pull_request
    return tenant.changes_by_pull_request if own is None else own


def _approval(decision: policy.PolicyDecision) -> str:
    if decision.outcome == PolicyOutcome.AUTO_APPROVE:
        return "approved at once (within the budget)"
    if decision.outcome == PolicyOutcome.DENY:
        return f"refused{': ' + decision.message if decision.message else ''}"
    one, many = _APPROVERS.get(decision.approver_role, _APPROVERS[ApproverRole.PLATFORM_ADMIN])
    if decision.approvals_required > 1:
        return f"waits for {decision.approvals_required} {many} to approve it"
    return f"waits for {one} to approve it"


def tier_outlook(
    *, tenant: Tenant, requester: User, kind: str, tiers: Iterable[EnvironmentTier]
) -> dict[str, str]:
    """Tier slug → what a request of `kind` for that tier goes through, in words: "waits
    for a platform admin to approve it; then its GitOps change waits in a pull request on
    the tenant's repository until it is merged"."""
    role = (
        Membership.objects.filter(tenant=tenant, user=requester)
        .values_list("role", flat=True)
        .first()
    )
    cluster = tenant.allowed_clusters.values_list("name", flat=True).first() or ""
    said = {}
    for tier in tiers:
        attributes = rule_attributes(
            kind=kind,
            tenant=tenant,
            tiers=[tier.slug],
            cluster=cluster,
            amounts=Usage(
                tier.default_cpu_millis, tier.default_memory_mib, tier.default_storage_gib, 1
            ),
            ephemeral=bool(tier.is_ephemeral),
            requester=requester,
            role=role or "",
        )
        decision = policy.decide(attributes)
        words = _approval(decision)
        if decision.outcome != PolicyOutcome.DENY and by_pull_request(tenant, tier):
            words += (
                "; then its GitOps change waits in a pull request on the tenant's repository "
                "until someone merges it"
            )
        said[tier.slug] = words
    return said
