"""Reads of the tenancy domain, always scoped to what the user may see."""

from __future__ import annotations

from django.db.models import Count, Q, QuerySet
from django.shortcuts import get_object_or_404

from tenants import budget, quantities
from tenants.choices import ApproverRole, EnvironmentState, NamespaceState, RequestState, Role
from tenants.models import (
    AuditEvent,
    EphemeralEnvironment,
    Membership,
    Namespace,
    Project,
    Request,
    Tenant,
    User,
)

# A budget dimension this full (or fuller) is flagged; the meter turns amber from LOW.
BUDGET_NEAR_LIMIT_PERCENT = 90
BUDGET_LOW_PERCENT = 75
BUDGET_DIMENSIONS = (
    # key, label, attribute of budget.Usage, how a person reads the amount
    ("cpu", "CPU", "cpu_millis", quantities.millis_to_cpu),
    ("memory", "Memory", "memory_mib", quantities.mib_to_memory),
    ("storage", "Storage", "storage_gib", quantities.gib_to_storage),
    ("namespaces", "Namespaces", "namespaces", int),
)


def tenants_for_user(user: User) -> QuerySet[Tenant]:
    """Tenants the user belongs to; platform admins see every tenant."""
    tenants = Tenant.objects.all()
    if not is_platform_admin(user):
        tenants = tenants.filter(memberships__user=user)
    return tenants.annotate(
        live_namespace_count=Count(
            "namespaces", filter=~Q(namespaces__state=NamespaceState.DECOMMISSIONED), distinct=True
        )
    ).order_by("slug")


def role_by_tenant(user: User) -> dict[int, str]:
    return dict(user.memberships.values_list("tenant_id", "role"))


def requests_visible_to(user: User) -> QuerySet[Request]:
    requests = Request.objects.select_related("tenant", "requester")
    if is_platform_admin(user):
        return requests
    return requests.filter(tenant__memberships__user=user)


def is_platform_admin(user: User) -> bool:
    return bool(user.is_platform_admin or user.is_superuser)


def visible_request(user: User, pk: int) -> Request:
    """One request, or 404 — never a hint that another tenant's request exists."""
    return get_object_or_404(requests_visible_to(user), pk=pk)


def request_history(tenancy_request: Request) -> QuerySet[AuditEvent]:
    return AuditEvent.objects.filter(
        object_type=Request._meta.label_lower, object_id=str(tenancy_request.pk)
    ).order_by("created_at", "id")


def namespaces_visible_to(user: User) -> QuerySet[Namespace]:
    namespaces = Namespace.objects.select_related("tenant", "tier", "cluster", "project")
    if is_platform_admin(user):
        return namespaces
    return namespaces.filter(tenant__memberships__user=user)


def visible_namespace(user: User, pk: int) -> Namespace:
    return get_object_or_404(namespaces_visible_to(user), pk=pk)


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
    if tenancy_request.kind == "ephemeral":
        return EphemeralEnvironment.objects.filter(request=tenancy_request).first()
    if tenancy_request.kind == "end_environment":
        return EphemeralEnvironment.objects.filter(
            tenant=tenancy_request.tenant_id, pk=tenancy_request.payload.get("environment")
        ).first()
    return None


def may_edit_environment_rules(user: User, tenant: Tenant) -> bool:
    return is_platform_admin(user) or role_in(user, tenant) == Role.OWNER


def environment_rules_preview(
    tenant: Tenant, *, project: str, env_slug: str, branch: str = "", mr_id: str = "",
    cluster: str = "",
) -> dict:
    """Which of the tenant's environment rules an environment with these variables meets and
    the namespace it names (tenants.environment_rules.choose), before anything is submitted.

    `ready` is False until a project and an env slug are given. Otherwise: `refused` (the
    rule's message) or `no_match`, or `namespace` with `rule` (the EnvironmentRule, None for
    the default template), `shared`, `truncated` (cut to 63 with a hash), and `problems`."""
    from tenants import environment_rules
    from tenants.validators import validate_dns_label

    variables = {"tenant": tenant.slug, "project": project.strip(),
                 "env_slug": env_slug.strip(), "branch": branch.strip(), "mr_id": mr_id.strip()}
    result: dict = {"ready": bool(variables["project"] and variables["env_slug"]),
                    "variables": variables, "problems": []}
    if not result["ready"]:
        return result
    try:
        validate_dns_label(variables["env_slug"])
    except Exception as exc:  # noqa: BLE001 - a Django ValidationError, shown as typed
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
    result.update(rule=rule, refused=choice.refused, shared=choice.shared,
                  namespace=choice.namespace)
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


def visible_tenant(user: User, slug: str) -> Tenant:
    return get_object_or_404(tenants_for_user(user), slug=slug)


def role_in(user: User, tenant: Tenant) -> str | None:
    return (
        Membership.objects.filter(user=user, tenant=tenant).values_list("role", flat=True).first()
    )


def may_request(user: User, tenant: Tenant) -> bool:
    return is_platform_admin(user) or role_in(user, tenant) is not None


def why_cannot_decide(user: User, tenancy_request: Request) -> str | None:
    """None when the user may approve or reject this request, else the reason they may not."""
    if tenancy_request.requester_id == user.pk:
        return "Nobody may decide their own request."
    if is_platform_admin(user):
        return None
    if (
        tenancy_request.approver_role == ApproverRole.TENANT_OWNER
        and role_in(user, tenancy_request.tenant) == Role.OWNER
    ):
        return None
    who = ApproverRole(tenancy_request.approver_role).label.lower()
    return f"This request needs a {who} to decide it."


def decidable_by(user: User) -> QuerySet[Request]:
    """The approval queue: requests awaiting a decision this user may make, oldest first."""
    pending = (
        Request.objects.filter(state=RequestState.SUBMITTED)
        .exclude(requester=user)
        .select_related("tenant", "requester")
        .order_by("created_at", "id")
    )
    if is_platform_admin(user):
        return pending
    owned = Membership.objects.filter(user=user, role=Role.OWNER).values("tenant_id")
    return pending.filter(approver_role=ApproverRole.TENANT_OWNER, tenant_id__in=owned)


def audit_events_visible_to(user: User) -> QuerySet[AuditEvent]:
    """Platform admins see everything; tenant owners see their tenants' events."""
    events = AuditEvent.objects.select_related("tenant")
    if is_platform_admin(user):
        return events
    owned = Membership.objects.filter(user=user, role=Role.OWNER).values("tenant_id")
    return events.filter(tenant_id__in=owned)


def may_see_audit(user: User) -> bool:
    return is_platform_admin(user) or user.memberships.filter(role=Role.OWNER).exists()


def name_preview(tenant: Tenant, *, app: str, tier: str, cluster: str) -> dict:
    """The namespace name a request would get, and why it could not have it, as typed."""
    from django.conf import settings

    from tenants.naming import namespace_name, reserved_reason, was_truncated
    from tenants.validators import validate_dns_label

    if not app or not tier:
        return {"name": "", "problems": []}
    name = namespace_name(tenant.slug, app, tier)
    problems = []
    try:
        validate_dns_label(app)
    except Exception as exc:  # noqa: BLE001 - a Django ValidationError, shown as typed
        problems += list(getattr(exc, "messages", [str(exc)]))
    reason = reserved_reason(name, berth_namespace=settings.BERTH_NAMESPACE)
    if reason:
        problems.append(reason)
    taken = (
        Namespace.objects.filter(cluster__name=cluster, name=name)
        .exclude(state=NamespaceState.DECOMMISSIONED)
        .first()
    )
    if taken is not None:
        problems.append(f"{name} is already taken ({taken.get_state_display().lower()}).")
    return {"name": name, "truncated": was_truncated(tenant.slug, app, tier),
            "problems": problems}


def projects_visible_to(user: User) -> QuerySet[Project]:
    """Projects of the user's tenants; platform admins see every project."""
    projects = Project.objects.select_related("tenant")
    if is_platform_admin(user):
        return projects
    return projects.filter(tenant__memberships__user=user)


def visible_project(user: User, pk: int) -> Project:
    return get_object_or_404(projects_visible_to(user), pk=pk)


def effective_permissions(tenant: Tenant) -> list[dict]:
    """What Kubernetes lets the tenant's owners, members, viewers and GitOps identity do in
    the namespaces of each tier the tenant may use (every tier when none is listed), in
    plain words (provisioning.guardrails.describe_role)."""
    from provisioning.guardrails import describe_role, role_writes
    from provisioning.plan import GITOPS_SERVICE_ACCOUNT, TENANT_EDIT_ROLE
    from tenants.models import EnvironmentTier

    tiers = list(tenant.allowed_tiers.all()) or list(EnvironmentTier.objects.all())
    rows = []
    for tier in tiers:
        people = [
            {
                "label": label,
                "groups": tenant.groups_for(role),
                "cluster_role": tier.cluster_role_for(role),
                "summary": describe_role(tier.cluster_role_for(role))
                if tenant.groups_for(role)
                else "nothing: the tenant names no group for them",
            }
            for role, label in ((Role.OWNER, "Owners"), (Role.MEMBER, "Members"),
                                (Role.VIEWER, "Viewers"))
        ]
        gitops = {
            "label": f"GitOps ({GITOPS_SERVICE_ACCOUNT})",
            "groups": [],
            "cluster_role": TENANT_EDIT_ROLE,
            "summary": describe_role(TENANT_EDIT_ROLE),
        }
        writers = [
            entry for entry in people
            if entry["groups"] and role_writes(entry["cluster_role"]) is not False
        ]
        rows.append({"tier": tier, "entries": [*people, gitops], "gitops_only": not writers})
    return rows


def budget_summary(tenant: Tenant) -> list[dict]:
    """Per dimension (CPU, memory, storage, namespaces): what the tenant uses of its budget.

    `used`, `total` and `left` are what a person reads (Kubernetes quantities; a count for
    namespaces); `*_amount` are the same in stored units (millicores, MiB, GiB), for a
    meter. Usage is tenants.budget.usage: a couple of aggregate queries, whatever the size.
    """
    used, limit = budget.usage(tenant), budget.limits(tenant)
    rows = []
    for key, label, attribute, show in BUDGET_DIMENSIONS:
        have, total = getattr(used, attribute), getattr(limit, attribute)
        left = max(total - have, 0)
        # Whole percent, rounded down (past 100 when a budget was lowered below its use);
        # nothing left of a zero budget is as full as a used-up one.
        percent = have * 100 // total if total else 100
        rows.append({
            "key": key,
            "label": label,
            "used": show(have),
            "total": show(total),
            "left": show(left),
            "used_amount": have,
            "total_amount": total,
            "left_amount": left,
            "percent": percent,
            "low": total * BUDGET_LOW_PERCENT / 100,
            "high": total * BUDGET_NEAR_LIMIT_PERCENT / 100,
            "near_limit": percent >= BUDGET_NEAR_LIMIT_PERCENT,
        })
    return rows


def ephemeral_preview(user: User, tenant: Tenant, payload: dict) -> dict:
    """What creating this ephemeral environment would do (its namespace first of all),
    without creating anything. Raises what submitting would: bad input, budget, membership."""

    from tenants.errors import NotAllowed
    from tenants.payloads import validate_payload

    if not may_request(user, tenant):
        raise NotAllowed(f"You are not a member of {tenant.slug}; ask one of its owners.")
    cleaned = validate_payload(kind="ephemeral", tenant=tenant, payload=payload)
    budget.check_fits(tenant=tenant, kind="ephemeral", payload=cleaned)
    return cleaned


def end_request_of(environment: EphemeralEnvironment) -> Request | None:
    return (
        Request.objects.filter(
            tenant=environment.tenant_id, kind="end_environment",
            payload__environment=environment.pk,
        )
        .order_by("-pk")
        .first()
    )
