"""A new project: an application with a namespace in each of its tiers, under one GitOps
engine, with its Kargo project where the engine is Argo CD + Kargo."""

from __future__ import annotations

from typing import Any

from tenants.budget import Usage
from tenants.choices import RequestKind
from tenants.kinds.base import Kind
from tenants.models import EnvironmentTier, Tenant
from tenants.payloads.namespaces import ProjectPayload


class ProjectKind(Kind):
    value = RequestKind.PROJECT
    payload = ProjectPayload
    previews_names = True
    quota_from_tiers = True
    creates_project = True
    claims_project_names = True

    def claimed_tiers(self, payload: dict[str, Any]) -> list[tuple[str, str]]:
        return [(payload["app"], slug) for slug in payload["tiers"]]

    def demand(self, *, tenant: Tenant, payload: dict[str, Any]) -> Usage:
        total = Usage()
        for tier in EnvironmentTier.objects.filter(slug__in=payload["tiers"]):
            total = total + Usage(
                tier.default_cpu_millis, tier.default_memory_mib, tier.default_storage_gib, 1
            )
        return total

    def replayed_demand(self, *, tenant: Tenant, payload: dict[str, Any]) -> Usage:
        tiers = EnvironmentTier.objects.filter(slug__in=payload.get("tiers") or [])
        return Usage(
            sum(t.default_cpu_millis for t in tiers),
            sum(t.default_memory_mib for t in tiers),
            sum(t.default_storage_gib for t in tiers),
            0,
        )

    def asked_tiers(self, payload: dict[str, Any]) -> list[str]:
        return list(payload.get("tiers") or [])


KIND = ProjectKind()
