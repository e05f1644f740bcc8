"""What every request kind declares. The defaults are those of a kind that asks for no
namespace of its own, counts nothing against the budget and is decided by the rules."""

from __future__ import annotations

import enum
from typing import Any, ClassVar

from django.db.models import QuerySet

from tenants.budget import Usage
from tenants.choices import RequestKind
from tenants.models import Namespace, Tenant
from tenants.payloads.base import TenantScoped


class Target(enum.Enum):
    """What a request of the kind is about, as the approval rules see it (its tiers, its
    cluster, whether it is ephemeral)."""

    TIERS = "tiers"  # the tiers and the cluster its payload names
    NAMESPACE = "namespace"  # one live namespace of the tenant, by name
    CLUSTER = "cluster"  # what the tenant (or one project) has on a cluster


class Kind:
    value: ClassVar[RequestKind]
    # Validates the payload against the tenant and returns it normalised.
    payload: ClassVar[type[TenantScoped]]
    target: ClassVar[Target] = Target.TIERS

    # Asking: "" when people ask for it on the request form or the API, else where they do.
    asked_elsewhere: ClassVar[str] = ""
    # The payload keys that say what it removes: the same one asked twice while the first
    # is open is refused (the second would only race the first).
    deduplicated_by: ClassVar[tuple[str, ...]] = ()
    # Takes namespaces away: still admitted while the tenant's repository cannot be written
    # (its files go with a later sync; the cluster side must not be held back).
    decommissions: ClassVar[bool] = False
    # Ends namespaces (showback stops billing them when it finishes).
    removes_namespaces: ClassVar[bool] = False
    # Decided by Berth, never by the approval rules (nothing to replay in a what-if).
    decided_by_rules: ClassVar[bool] = True
    # Its request form shows, as people type, the names it would take.
    previews_names: ClassVar[bool] = False
    # Comes and goes by the dozen: people hear only of the events that concern them.
    quiet: ClassVar[bool] = False
    # Gives a person a role for a while (tenants.models.AccessGrant, made as it is admitted).
    grants_access: ClassVar[bool] = False
    # Anyone signed in may ask it of a tenant they do not belong to (its rules decide).
    open_to_outsiders: ClassVar[bool] = False
    # What the request form tells people will happen once they submit.
    form_note: ClassVar[str] = (
        "Nothing is created until the request is approved; you will see its plan first."
    )

    # Names: the field a taken name is reported on, and what the claimed namespaces hold.
    names_field: ClassVar[str] = "app"
    quota_from_tiers: ClassVar[bool] = False  # the tiers' defaults, not the payload's
    creates_project: ClassVar[bool] = False  # recorded once its run succeeds
    claims_project_names: ClassVar[bool] = False  # the project's Kargo namespace too
    starts_environment: ClassVar[bool] = False  # claims an ephemeral environment's names
    ends_environment: ClassVar[bool] = False  # its environment is ending once it is asked
    sets_sleep_schedule: ClassVar[bool] = False  # its namespace's, once its run is Ready

    @property
    def label(self) -> str:
        return str(self.value.label)

    def claimed_tiers(self, payload: dict[str, Any]) -> list[tuple[str, str]]:
        """(application, tier) of every tier namespace it would create."""
        return []

    def demand(self, *, tenant: Tenant, payload: dict[str, Any]) -> Usage:
        """What admitting it adds to the tenant's budget usage (a validated payload)."""
        return Usage()

    def replayed_demand(self, *, tenant: Tenant, payload: dict[str, Any]) -> Usage:
        """`demand` as a what-if reconstructs it for a request decided long ago: its
        payload may predate today's schema and its namespace may be gone."""
        return Usage()

    def asked_tiers(self, payload: dict[str, Any]) -> list[str]:
        """The tier slugs a `Target.TIERS` kind names."""
        return [payload.get("tier", "")]

    def on_cluster(self, namespaces: QuerySet[Namespace], payload: dict[str, Any]):
        """Of the tenant's namespaces on the cluster, those a `Target.CLUSTER` kind touches."""
        return namespaces

    def rule_attributes(self, payload: dict[str, Any]) -> dict[str, Any]:
        """What approval rules see of it beyond what every request shows."""
        return {}

    def removes(self, payload: dict[str, Any], namespace: Namespace) -> bool:
        """Does a request of this kind with this payload take `namespace` away?"""
        return False


def payload_usage(payload: dict[str, Any]) -> Usage:
    """One namespace with the quota its payload asks for."""
    return Usage(payload["cpu_millis"], payload["memory_mib"], payload.get("storage_gib", 0), 1)


def replayed_payload_usage(payload: dict[str, Any]) -> Usage:
    return Usage(
        int(payload.get("cpu_millis", 0)),
        int(payload.get("memory_mib", 0)),
        int(payload.get("storage_gib", 0)),
        0,
    )


class OneSizedNamespace(Kind):
    """A kind that asks for one new namespace, sized in its payload."""

    def demand(self, *, tenant: Tenant, payload: dict[str, Any]) -> Usage:
        return payload_usage(payload)

    def replayed_demand(self, *, tenant: Tenant, payload: dict[str, Any]) -> Usage:
        return replayed_payload_usage(payload)
