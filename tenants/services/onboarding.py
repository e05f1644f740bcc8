"""Tenants: onboarding in one step, and later changes over the REST API. Each is followed
by a request per cluster the tenant uses to apply its objects there as the records now say
(`request_tenant_sync`): its roots, AppProject, credentials, groups' bindings, domains."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from tenants import audit, selectors
from tenants.choices import MembershipSource, NamespaceState, RequestKind, RequestState, Role
from tenants.errors import DomainError, InvalidInput, NotAllowed
from tenants.models import (
    Cluster,
    EnvironmentTier,
    Membership,
    Namespace,
    NamespaceClaim,
    Request,
    Tenant,
    User,
)
from tenants.services.editing import apply_changes, full_clean
from tenants.services.names import NameTaken, claim_tenant_names, release
from tenants.services.requests import submit_request

# What a tenant's objects on a cluster are made of: a change to any of them is applied there.
SYNCED_FIELDS = frozenset(
    {
        "owner_groups",
        "member_groups",
        "viewer_groups",
        "gitops_repo_url",
        "gitops_branch",
        "gitops_path",
        "gitops_credentials",
        "gitops_known_hosts",
        "gitops_engine",
        "allowed_domains",
        "allowed_clusters",
    }
)


def onboard_tenant(
    *,
    actor: User,
    slug: str,
    name: str,
    groups: dict[str, list[str]],
    repo_url: str,
    branch: str,
    path: str,
    credentials: str,
    engine: str,
    budget_limits: dict[str, int],
    clusters: list[Cluster],
    tiers: list[EnvironmentTier],
    allowed_domains: list[str],
    notify_emails: list[str],
    known_hosts: str = "",
    commit_url: str = "",
    source_ip: str | None = None,
) -> Tenant:
    """Create a tenant in one step: who belongs, where its GitOps lives, what it may use;
    then ask for its objects on each of its clusters."""
    if not selectors.is_platform_admin(actor):
        raise NotAllowed("Only platform admins may onboard tenants.")
    tenant = Tenant(
        slug=slug,
        name=name,
        owner_groups=groups.get("owner", []),
        member_groups=groups.get("member", []),
        viewer_groups=groups.get("viewer", []),
        gitops_repo_url=repo_url,
        gitops_branch=branch or "main",
        gitops_path=path,
        gitops_credentials=credentials,
        gitops_known_hosts=known_hosts,
        gitops_engine=engine,
        gitops_commit_url=commit_url,
        budget_cpu_millis=budget_limits["cpu_millis"],
        budget_memory_mib=budget_limits["memory_mib"],
        budget_storage_gib=budget_limits["storage_gib"],
        budget_namespaces=budget_limits["namespaces"],
        allowed_domains=allowed_domains,
        notify_emails=notify_emails,
    )
    try:
        tenant.full_clean()
    except DjangoValidationError as exc:
        raise InvalidInput.of(exc.message_dict) from exc
    with transaction.atomic():
        tenant.save()
        tenant.allowed_clusters.set(clusters)
        _claim_names_on(tenant, clusters)
        tenant.allowed_tiers.set(tiers)
        audit.record(
            actor=actor,
            action="tenant.onboard",
            obj=tenant,
            tenant_id=tenant.pk,
            source_ip=source_ip,
            after={
                "slug": slug,
                "groups": groups,
                "repo_url": repo_url,
                "engine": engine,
                "budget": budget_limits,
                "clusters": [c.name for c in clusters],
                "tiers": [t.slug for t in tiers],
                "credentials_set": bool(credentials),
            },
        )
    request_tenant_sync(tenant=tenant, actor=actor, reason=f"Tenant {slug} onboarded.")
    return tenant


def emptied_roles(tenant: Tenant, changes: dict[str, Any]) -> dict[str, int]:
    """Roles whose groups these changes empty, with how many people hold them by group."""
    emptied = {}
    for role in (Role.OWNER, Role.MEMBER, Role.VIEWER):
        field = f"{role}_groups"
        if field in changes and not changes[field] and getattr(tenant, field):
            people = Membership.objects.filter(
                tenant=tenant, role=role, source=MembershipSource.OIDC
            ).count()
            if people:
                emptied[field] = people
    return emptied


def refuse_emptied_roles(tenant: Tenant, changes: dict[str, Any]) -> None:
    emptied = emptied_roles(tenant, changes)
    if emptied:
        raise InvalidInput.of(
            {
                field: [
                    f"This removes every {field.removesuffix('_groups')} of {tenant.slug}: "
                    f"{people} "
                    f"{'person loses' if people == 1 else 'people lose'} the role at their next "
                    "sign-in. Confirm the removal (confirm_removals) to do it."
                ]
                for field, people in emptied.items()
            }
        )


def update_tenant(
    *,
    actor: User,
    tenant: Tenant,
    changes: dict[str, Any],
    clusters: list[Cluster] | None = None,
    tiers: list[EnvironmentTier] | None = None,
    source_ip: str | None = None,
    confirm_removals: bool = False,
) -> Tenant:
    """Change a tenant's groups, budget, GitOps settings or what it may use (not its slug).

    Memberships follow the new groups at each member's next sign-in, as they always do. A
    change that empties a role's groups while people hold that role needs
    `confirm_removals`: one PATCH must not take a whole team out by accident.
    """
    if not selectors.is_platform_admin(actor):
        raise NotAllowed("Only platform admins may change tenants.")
    if "slug" in changes and changes["slug"] != tenant.slug:
        raise InvalidInput.of({"slug": ["A tenant's slug names its namespaces; it cannot change."]})
    changes = {field: value for field, value in changes.items() if field != "slug"}
    with transaction.atomic():
        locked = Tenant.objects.select_for_update().get(pk=tenant.pk)
        if not confirm_removals:
            refuse_emptied_roles(locked, changes)
        before, after = apply_changes(locked, changes)
        full_clean(locked)
        locked.save()
        for relation, wanted, label in (
            ("allowed_clusters", clusters, "name"),
            ("allowed_tiers", tiers, "slug"),
        ):
            if wanted is None:
                continue
            manager = getattr(locked, relation)
            old = sorted(manager.values_list(label, flat=True))
            new = sorted(getattr(item, label) for item in wanted)
            if old != new:
                manager.set(wanted)
                before[relation], after[relation] = old, new
        if clusters is not None:
            _claim_names_on(locked, clusters)
        if after:
            audit.record(
                actor=actor,
                action="tenant.update",
                obj=locked,
                tenant_id=locked.pk,
                before=before,
                after=after,
                source_ip=source_ip,
            )
    synced = sorted(SYNCED_FIELDS & set(after))
    if synced:
        request_tenant_sync(
            tenant=locked, actor=actor, reason=f"Tenant {locked.slug} changed: {', '.join(synced)}."
        )
    return locked


def clusters_used(tenant: Tenant) -> list[Cluster]:
    """The clusters the tenant may use and those it still has namespaces on."""
    live = Namespace.objects.filter(
        tenant=tenant, state__in=(NamespaceState.PENDING, NamespaceState.ACTIVE)
    ).values("cluster")
    return list(
        Cluster.objects.filter(
            Q(pk__in=tenant.allowed_clusters.values("pk")) | Q(pk__in=live)
        ).distinct()
    )


def request_tenant_sync(*, tenant: Tenant, actor: User, reason: str) -> list[Request]:
    """Ask, per cluster the tenant uses, for its objects there to follow its records (one
    open request per cluster is enough: its plan is rendered from the records when it runs).
    The approval rules decide; what they refuse is in the audit log, the tenant change
    stands."""
    made = []
    for cluster in sorted(clusters_used(tenant), key=lambda c: c.name):
        pending = Request.objects.filter(
            tenant=tenant,
            kind=RequestKind.TENANT_SYNC,
            payload__cluster=cluster.name,
            state__in=(RequestState.SUBMITTED, RequestState.APPROVED),
        )
        if pending.exists():
            continue
        try:
            made.append(
                submit_request(
                    tenant=tenant,
                    kind=RequestKind.TENANT_SYNC,
                    requester=actor,
                    payload={"cluster": cluster.name, "reason": reason},
                )
            )
        except DomainError as exc:  # refused input too: the audit log says why
            audit.record(
                actor=actor,
                action="tenant_sync.refused",
                obj=tenant,
                tenant_id=tenant.pk,
                after={"cluster": cluster.name, "why": str(exc)},
            )
    return made


def retire_tenant(*, tenant_id: int, tenancy_request: Request) -> bool:
    """The tenant decommission that cleaned the tenant's last cluster asked to retire it:
    it takes no new request, leaves its members' lists, and the names it held are free
    again; its records and audit trail stay. False when a namespace lives on somewhere (a
    request provisioned meanwhile): then it stays, and the audit log says why."""
    with transaction.atomic():
        tenant = Tenant.objects.select_for_update().get(pk=tenant_id)
        if tenant.retired_at is not None:
            return True
        live = sorted(
            Namespace.objects.filter(
                tenant=tenant,
                state__in=(
                    NamespaceState.PENDING,
                    NamespaceState.ACTIVE,
                    NamespaceState.DECOMMISSIONING,
                ),
            ).values_list("name", flat=True)
        )
        if live:
            audit.record(
                actor=None,
                action="tenant.retire_refused",
                obj=tenant,
                tenant_id=tenant.pk,
                after={"request": tenancy_request.pk, "live_namespaces": live[:20]},
            )
            return False
        tenant.retired_at = timezone.now()
        tenant.save(update_fields=["retired_at"])
        freed = release(NamespaceClaim.objects.filter(tenant=tenant))
        audit.record(
            actor=tenancy_request.requester,
            action="tenant.retire",
            obj=tenant,
            tenant_id=tenant.pk,
            after={"request": tenancy_request.pk, "names_released": freed},
        )
    return True


def _claim_names_on(tenant: Tenant, clusters: list[Cluster]) -> None:
    """The tenant's own names on every cluster it may use; a name already another's is
    refused as a field error (a tenant slug another tenant's names already use)."""
    try:
        for cluster in clusters:
            claim_tenant_names(tenant, cluster)
    except NameTaken as exc:
        raise InvalidInput.of({"slug": [str(exc)]}) from exc
