"""The rules people write: approval rules (platform admins) and a tenant's environment
rules (its owners), each validated whole before anything is saved, and audited.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from tenants import audit, environment_rules, selectors, whatif
from tenants.choices import NamePurpose, Role
from tenants.errors import InvalidInput, NotAllowed
from tenants.models import ApprovalRule, EnvironmentRule, Tenant, User
from tenants.name_registry import kept_for_tier, name_problem
from tenants.selectors.whatif import past_decisions, rules_with_edit

# How long a what-if's summary waits for the save of its proposal (into the audit event).
WHATIF_KEPT_SECONDS = 24 * 3600


def save_approval_rule(*, form, actor: User, source_ip: str | None = None) -> ApprovalRule:
    """Save a validated ApprovalRuleForm (its condition compiled) and audit the change."""
    if not selectors.is_platform_admin(actor):
        raise NotAllowed("Only platform admins may change approval rules.")
    before = None
    if form.instance.pk:
        before = {
            k: str(v)
            for k, v in ApprovalRule.objects.filter(pk=form.instance.pk)
            .values(*form.Meta.fields)
            .first()
            .items()
        }
    with transaction.atomic():
        # What saving puts in force, named as a what-if names it: its last replay is kept.
        tried = cache.get(
            _whatif_key(
                whatif.proposal_digest(
                    rules_with_edit(
                        pk=form.instance.pk,
                        rule=proposed_from(form.cleaned_data),
                        position=form.cleaned_data["position"],
                    )
                )
            )
        )
        rule = form.save()
        after = {field: str(getattr(rule, field)) for field in form.Meta.fields}
        if tried is not None:
            after["what_if"] = tried
        audit.record(
            actor=actor,
            action="policy.rule_saved",
            obj=rule,
            before=before,
            after=after,
            source_ip=source_ip,
        )
    return rule


def proposed_from(cleaned: dict[str, Any]) -> whatif.ProposedRule:
    """The rule a validated ApprovalRuleForm (or its fields) describes."""
    return whatif.ProposedRule(
        name=cleaned["name"],
        condition=cleaned["condition"],
        outcome=cleaned["outcome"],
        approvals_required=cleaned["approvals_required"],
        approver_role=cleaned["approver_role"],
        message=cleaned.get("message", ""),
        enabled=bool(cleaned.get("enabled")),
    )


def _whatif_key(digest: str) -> str:
    return f"policy-whatif:{digest}"


def try_approval_rules(
    *,
    actor: User,
    rules: list[whatif.ProposedRule],
    tenant: Tenant | None = None,
    kind: str = "",
    since: datetime | None = None,
    limit: int = whatif.REPLAY_LIMIT,
) -> whatif.WhatIf:
    """Replay `rules` (a whole proposed rule set, in order) over the last `limit` decided
    requests; nothing is saved but the summary, kept for the audit event of the save that
    puts exactly these rules in force. Platform admins only: it reads every tenant."""
    if not selectors.is_platform_admin(actor):
        raise NotAllowed("Only platform admins may try approval rules.")
    if not 1 <= limit <= whatif.REPLAY_LIMIT:
        raise InvalidInput.of({"limit": [f"Between 1 and {whatif.REPLAY_LIMIT}."]})
    if len(rules) > whatif.MAX_RULES:
        raise InvalidInput.of({"rules": [f"At most {whatif.MAX_RULES} rules."]})
    problems = [
        f"Rule {number} ({rule.name}): {message}"
        for number, rule in enumerate(rules, start=1)
        for message in whatif.rule_problems(rule).values()
    ]
    if problems:
        raise InvalidInput.of({"rules": problems})
    try:
        found = whatif.replay(
            rules, past_decisions(tenant=tenant, kind=kind, since=since, limit=limit)
        )
    except whatif.ReplayTooLong as exc:
        raise InvalidInput.of({"limit": [str(exc)]}) from exc
    cache.set(
        _whatif_key(whatif.proposal_digest(rules)),
        {
            **found.summary(),
            "by": actor.username,
            "at": timezone.now().isoformat(timespec="seconds"),
            "filters": {
                "tenant": tenant.slug if tenant else "",
                "kind": kind,
                "since": since.isoformat() if since else "",
                "limit": limit,
            },
        },
        WHATIF_KEPT_SECONDS,
    )
    return found


def _rule_row(rule: EnvironmentRule) -> dict[str, Any]:
    return {
        "if": rule.condition,
        "namespace": rule.namespace_template,
        "refuse": rule.refuse,
        "message": rule.message,
    }


MAX_ENVIRONMENT_RULES = 50


def replace_environment_rules(
    *, tenant: Tenant, rules: list[dict[str, Any]], actor: User, source_ip: str | None = None
) -> list[EnvironmentRule]:
    """Replace the tenant's ordered environment rules with `rules` (dicts of if, namespace,
    refuse, message), all validated first: one bad rule saves none. Owners and platform
    admins only. Rules only choose names inside the tenant's prefix, within its budget."""
    if not (selectors.is_platform_admin(actor) or selectors.role_in(actor, tenant) == Role.OWNER):
        raise NotAllowed(
            f"Only owners of {tenant.slug} and platform admins may change its environment rules."
        )
    if len(rules) > MAX_ENVIRONMENT_RULES:
        raise InvalidInput.of(
            {
                "rules": [
                    f"At most {MAX_ENVIRONMENT_RULES} rules; a template with variables covers many "
                    "environments in one rule."
                ]
            }
        )
    problems = []
    cleaned = []
    for number, rule in enumerate(rules, start=1):
        row = {
            "if": str(rule.get("if") or "").strip(),
            "namespace": str(rule.get("namespace") or "").strip(),
            "refuse": bool(rule.get("refuse", False)),
            "message": str(rule.get("message") or "").strip()[:300],
        }
        try:
            environment_rules.check_rule(
                tenant=tenant.slug,
                condition=row["if"],
                namespace=row["namespace"],
                refuse=row["refuse"],
            )
        except environment_rules.RuleError as exc:
            problems.append(f"Rule {number}: {exc}")
        else:
            problems += [f"Rule {number}: {found}" for found in _fixed_name_problems(tenant, row)]
        cleaned.append(row)
    if problems:
        raise InvalidInput.of({"rules": problems})
    with transaction.atomic():
        Tenant.objects.select_for_update().filter(pk=tenant.pk).first()
        before = [_rule_row(rule) for rule in tenant.environment_rules.all()]
        tenant.environment_rules.all().delete()
        saved = [
            EnvironmentRule.objects.create(
                tenant=tenant,
                position=number,
                condition=row["if"],
                namespace_template="" if row["refuse"] else row["namespace"],
                refuse=row["refuse"],
                message=row["message"],
            )
            for number, row in enumerate(cleaned, start=1)
        ]
        if before != [_rule_row(rule) for rule in saved]:
            audit.record(
                actor=actor,
                action="tenant.environment_rules",
                obj=tenant,
                tenant_id=tenant.pk,
                before={"rules": before},
                after={"rules": [_rule_row(rule) for rule in saved]},
                source_ip=source_ip,
            )
    return saved


def _fixed_name_problems(tenant: Tenant, row: dict[str, Any]) -> list[str]:
    """A fixed (shared) namespace a rule names must be free, or already the tenant's shared
    namespace, on every cluster the tenant may use."""
    if row["refuse"] or not environment_rules.is_shared(row["namespace"]):
        return []
    name = environment_rules.expand(row["namespace"], {})
    kept = kept_for_tier(tenant, name)
    if kept:
        return [kept]
    return [
        problem
        for cluster in tenant.allowed_clusters.all()
        if (problem := name_problem(cluster, name, purpose=NamePurpose.SHARED, tenant=tenant))
    ]
