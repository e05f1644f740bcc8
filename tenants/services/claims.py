"""Names a request takes while it waits: its namespaces (and its ephemeral environment),
claimed at submission in the namespace registry (tenants.services.names) so no other
request, rule or tenant can have them, and released when it is refused.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from tenants import audit
from tenants.choices import (
    EnvironmentState,
    GitOpsEngine,
    NamePurpose,
    NamespaceState,
)
from tenants.errors import InvalidInput
from tenants.kinds import kind_for
from tenants.models import (
    Cluster,
    EnvironmentTier,
    EphemeralEnvironment,
    Namespace,
    Project,
    Request,
)
from tenants.naming import kargo_namespace, namespace_name
from tenants.services.names import NameTaken, claim, claim_tenant_names, release_refused


def claim_names(tenancy_request: Request) -> None:
    """Take the names a request would create, so no other request or namespace can.

    The claim counts against the tenant's budget until the request is decided; the
    registry's unique constraint on live names is the backstop against two requests racing
    for one name. A name taken meanwhile is refused as a field error, nothing saved.
    """
    payload = tenancy_request.payload
    kind = kind_for(tenancy_request.kind)
    if kind.starts_environment:
        _claim_environment(tenancy_request)
        return
    if kind.ends_environment:
        EphemeralEnvironment.objects.filter(pk=payload["environment"]).update(
            state=EnvironmentState.ENDING
        )
        return
    wanted = kind.claimed_tiers(payload)
    if not wanted:
        return
    try:
        with transaction.atomic():
            claim_tenant_names(tenancy_request.tenant, Cluster.objects.get(name=payload["cluster"]))
            _claim_tier_namespaces(tenancy_request, wanted)
            if kind.claims_project_names:
                _claim_project_names(tenancy_request)
    except NameTaken as exc:
        raise InvalidInput.of({kind.names_field: [str(exc)]}) from exc


def _claim_tier_namespaces(tenancy_request: Request, wanted: list[tuple[str, str]]) -> None:
    payload, tenant = tenancy_request.payload, tenancy_request.tenant
    cluster = Cluster.objects.get(name=payload["cluster"])
    tiers = {
        tier.slug: tier
        for tier in EnvironmentTier.objects.filter(slug__in=[slug for _, slug in wanted])
    }
    is_project = kind_for(tenancy_request.kind).quota_from_tiers
    for app, slug in wanted:
        tier = tiers[slug]
        name = namespace_name(tenant.slug, app, slug)
        try:
            with transaction.atomic():
                namespace = Namespace.objects.create(
                    name=name,
                    tenant=tenant,
                    cluster=cluster,
                    tier=tier,
                    state=NamespaceState.REQUESTED,
                    request=tenancy_request,
                    cpu_millis=tier.default_cpu_millis if is_project else payload["cpu_millis"],
                    memory_mib=tier.default_memory_mib if is_project else payload["memory_mib"],
                    storage_gib=(
                        tier.default_storage_gib if is_project else payload.get("storage_gib", 0)
                    ),
                )
        except IntegrityError as exc:
            raise NameTaken(f"{name} was just taken by another request.") from exc
        claim(
            cluster=cluster,
            name=name,
            purpose=NamePurpose.TIER,
            tenant=tenant,
            app=app,
            tier=slug,
            request=tenancy_request,
            namespace=namespace,
        )


def _claim_project_names(tenancy_request: Request) -> None:
    """A project's own name beside its tiers': its Kargo project's namespace."""
    payload, tenant = tenancy_request.payload, tenancy_request.tenant
    if payload["engine"] == GitOpsEngine.ARGOCD_KARGO:
        claim(
            cluster=Cluster.objects.get(name=payload["cluster"]),
            name=kargo_namespace(tenant.slug, payload["app"]),
            purpose=NamePurpose.KARGO,
            tenant=tenant,
            app=payload["app"],
            request=tenancy_request,
        )


def _claim_environment(tenancy_request: Request) -> None:
    """An ephemeral environment: its record, and its namespace's name unless it shares one."""
    payload, tenant = tenancy_request.payload, tenancy_request.tenant
    project = Project.objects.get(tenant=tenant, name=payload["project"])
    cluster = Cluster.objects.get(name=payload["cluster"])
    now = timezone.now()
    expires_at = now + timedelta(seconds=payload["ttl_seconds"])
    tier = EnvironmentTier.objects.get(slug=payload["tier"])
    longest = tier.max_ttl or settings.BERTH_EPHEMERAL_MAX_TTL
    try:
        with transaction.atomic():
            claim_tenant_names(tenant, cluster)
            if payload["creates_namespace"]:
                namespace = Namespace.objects.create(
                    name=payload["namespace"],
                    tenant=tenant,
                    cluster=cluster,
                    tier=tier,
                    project=None if payload["shared"] else project,
                    state=NamespaceState.REQUESTED,
                    request=tenancy_request,
                    cpu_millis=payload["cpu_millis"],
                    memory_mib=payload["memory_mib"],
                    storage_gib=payload["storage_gib"],
                    expires_at=None if payload["shared"] else expires_at,
                )
                claim(
                    cluster=cluster,
                    name=namespace.name,
                    tenant=tenant,
                    **_environment_owner(payload, project),
                    request=tenancy_request,
                    namespace=namespace,
                )
            else:
                namespace = Namespace.objects.get(
                    tenant=tenant,
                    cluster=cluster,
                    name=payload["namespace"],
                    state=NamespaceState.ACTIVE,
                )
            environment = EphemeralEnvironment.objects.create(
                tenant=tenant,
                project=project,
                slug=payload["env_slug"],
                branch=payload["branch"],
                merge_request=payload["mr_id"],
                namespace=namespace,
                owns_namespace=payload["creates_namespace"] and not payload["shared"],
                rule_position=payload["rule_position"],
                request=tenancy_request,
                expires_at=expires_at,
                max_expires_at=max(now + longest, expires_at),
            )
    except NameTaken as exc:
        raise InvalidInput.of({"env_slug": [str(exc)]}) from exc
    except (IntegrityError, Namespace.DoesNotExist) as exc:
        raise InvalidInput.of(
            {
                "env_slug": [
                    f"{payload['namespace']} or environment {payload['env_slug']} was just taken "
                    "by another request; try again."
                ]
            }
        ) from exc
    audit.record(
        actor=tenancy_request.requester,
        action="environment.create",
        obj=environment,
        tenant_id=tenant.pk,
        after={
            "namespace": namespace.name,
            "shared": payload["shared"],
            "rule": payload["rule_position"],
            "expires_at": expires_at.isoformat(),
            "request": tenancy_request.pk,
        },
    )


def _environment_owner(payload: dict[str, Any], project: Project) -> dict[str, str]:
    if payload["shared"]:
        return {"purpose": NamePurpose.SHARED}
    return {
        "purpose": NamePurpose.EPHEMERAL,
        "app": project.name,
        "environment": payload["env_slug"],
    }


def release_claims(tenancy_request: Request) -> dict[str, Any]:
    ended = EphemeralEnvironment.objects.filter(
        request=tenancy_request, state=EnvironmentState.STARTING
    ).update(state=EnvironmentState.ENDED, ended_at=timezone.now())
    released = Namespace.objects.filter(request=tenancy_request, state=NamespaceState.REQUESTED)
    release_refused(tenancy_request)
    namespace_names = list(released.values_list("name", flat=True))
    # An environment's record keeps pointing at the name it was given: kept, but freed.
    released.filter(ephemeral_environments__isnull=False).update(
        state=NamespaceState.DECOMMISSIONED
    )
    released.filter(ephemeral_environments__isnull=True).delete()
    result: dict[str, Any] = {"released": namespace_names} if namespace_names else {}
    if ended:
        result["environment_ended"] = True
    return result
