"""Ephemeral environments a person may see and manage, and what the tenant's environment
rules would name one before it is submitted.
"""

from __future__ import annotations

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from tenants.choices import EnvironmentState, NamespaceState, Role
from tenants.kinds import kind_for
from tenants.models import AuditEvent, EphemeralEnvironment, Namespace, Request, Tenant, User
from tenants.selectors.rights import is_platform_admin, role_in


def environments_visible_to(user: User) -> QuerySet[EphemeralEnvironment]:
    environments = EphemeralEnvironment.objects.select_related(
        "tenant", "project", "namespace__cluster", "namespace__tier", "request__requester"
    )
    if is_platform_admin(user):
        return environments
    return environments.filter(tenant__memberships__user=user)


def visible_environment(user: User, pk: int) -> EphemeralEnvironment:
    return get_object_or_404(environments_visible_to(user), pk=pk)


def live_environments(user: User, tenant: Tenant) -> QuerySet[EphemeralEnvironment]:
    return (
        environments_visible_to(user)
        .filter(tenant=tenant)
        .exclude(state=EnvironmentState.ENDED)
        .order_by("expires_at", "id")
    )


def environments_in(namespace: Namespace) -> QuerySet[EphemeralEnvironment]:
    """The ephemeral environments that live in a namespace now (several, if it is shared)."""
    return (
        namespace.ephemeral_environments.exclude(state=EnvironmentState.ENDED)
        .select_related("project")
        .order_by("slug")
    )


def may_manage_environment(user: User, environment: EphemeralEnvironment) -> bool:
    """Who may extend it: its creator, the tenant's owners, platform admins."""
    return (
        is_platform_admin(user)
        or environment.request.requester_id == user.pk
        or role_in(user, environment.tenant) == Role.OWNER
    )


def may_end_environment(user: User, environment: EphemeralEnvironment) -> bool:
    """Who may end it early: those who may extend it, and the tenant's members (CI tokens
    act as one). Viewers look only."""
    return may_manage_environment(user, environment) or (
        role_in(user, environment.tenant) == Role.MEMBER
    )


def environment_history(environment: EphemeralEnvironment) -> QuerySet[AuditEvent]:
    return AuditEvent.objects.filter(
        object_type=EphemeralEnvironment._meta.label_lower, object_id=str(environment.pk)
    ).order_by("created_at", "id")


def environment_of_request(tenancy_request: Request) -> EphemeralEnvironment | None:
    """The environment an ephemeral request created, or the one an end request ends."""
    kind = kind_for(tenancy_request.kind)
    if kind.starts_environment:
        return EphemeralEnvironment.objects.filter(request=tenancy_request).first()
    if kind.ends_environment:
        return EphemeralEnvironment.objects.filter(
            tenant=tenancy_request.tenant_id, pk=tenancy_request.payload.get("environment")
        ).first()
    return None


def may_edit_environment_rules(user: User, tenant: Tenant) -> bool:
    return is_platform_admin(user) or role_in(user, tenant) == Role.OWNER


def environment_rules_preview(
    tenant: Tenant,
    *,
    project: str,
    env_slug: str,
    branch: str = "",
    mr_id: str = "",
    cluster: str = "",
) -> dict:
    """Which of the tenant's environment rules an environment with these variables meets and
    the namespace it names (tenants.environment_rules.choose), before anything is submitted.

    `ready` is False until a project and an env slug are given. Otherwise: `refused` (the
    rule's message) or `no_match`, or `namespace` with `rule` (the EnvironmentRule, None for
    the default template), `shared`, `truncated` (cut to 63 with a hash), and `problems`."""
    from tenants import environment_rules
    from tenants.validators import validate_dns_label

    variables = {
        "tenant": tenant.slug,
        "project": project.strip(),
        "env_slug": env_slug.strip(),
        "branch": branch.strip(),
        "mr_id": mr_id.strip(),
    }
    result: dict = {
        "ready": bool(variables["project"] and variables["env_slug"]),
        "variables": variables,
        "problems": [],
    }
    if not result["ready"]:
        return result
    try:
        validate_dns_label(variables["env_slug"])
    except Exception as exc:
        result["problems"] += list(getattr(exc, "messages", [str(exc)]))
    rules = list(tenant.environment_rules.all())
    try:
        choice = environment_rules.choose(rules, variables)
    except environment_rules.RuleError as exc:
        result["error"] = str(exc)
        return result
    if choice is None:
        result["no_match"] = True
        return result
    rule = next((r for r in rules if r.position == choice.rule_position), None)
    result.update(
        rule=rule, refused=choice.refused, shared=choice.shared, namespace=choice.namespace
    )
    if choice.refused:
        return result
    result["truncated"] = choice.truncated
    problem = environment_rules.name_problem(choice.namespace, tenant=tenant.slug)
    if problem:
        result["problems"].append(problem)
    taken = Namespace.objects.filter(name=choice.namespace).exclude(
        state=NamespaceState.DECOMMISSIONED
    )
    if cluster:
        taken = taken.filter(cluster__name=cluster)
    taken = taken.first()
    if taken is not None and not choice.shared:
        result["problems"].append(
            f"{choice.namespace} already exists ({taken.get_state_display().lower()})."
        )
    elif taken is not None:
        result["existing"] = taken
    return result


def end_request_of(environment: EphemeralEnvironment) -> Request | None:
    return (
        Request.objects.filter(
            tenant=environment.tenant_id,
            kind="end_environment",
            payload__environment=environment.pk,
        )
        .order_by("-pk")
        .first()
    )
