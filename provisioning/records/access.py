"""Access grants' end as the engine saw it: once a grant is over (expired or revoked) and its
binding is gone from the cluster, `ended_at` is set and the audit log says so."""

from __future__ import annotations

from django.db.models import Q
from django.utils import timezone

from provisioning.plan.access import grant_binding_name
from tenants import audit
from tenants.models import AccessGrant, Namespace


def grants_ended(
    *, namespace: Namespace, removed: list[str], all_checked: bool, causes: list[str]
) -> list[int]:
    """Record the end of the namespace's grants that are over: those whose bindings the
    reconcile just removed (`removed`: their refs) and, when it checked every object
    (`all_checked`), every other one over too (its binding was not there). Their ids."""
    now = timezone.now()
    over = AccessGrant.objects.filter(namespace=namespace, ended_at__isnull=True).filter(
        Q(revoked_at__isnull=False) | Q(expires_at__lte=now)
    )
    ended = [
        grant
        for grant in over.select_related("person")
        if all_checked or any(ref.endswith(f"/{grant_binding_name(grant.pk)}") for ref in removed)
    ]
    if not ended:
        return []
    AccessGrant.objects.filter(pk__in=[grant.pk for grant in ended]).update(ended_at=now)
    gone = {ref.rpartition("/")[2] for ref in removed}
    audit.record_all(
        [
            audit.event(
                actor=None,
                action="access.ended",
                obj=namespace,
                tenant_id=namespace.tenant_id,
                after={
                    "grant": grant.pk,
                    "request": grant.request_id,
                    "person": grant.person.username,
                    "role": grant.role,
                    "why": "revoked" if grant.revoked_at else "expired",
                    "binding_removed": grant_binding_name(grant.pk) in gone,
                    "causes": causes,
                },
            )
            for grant in ended
        ]
    )
    return [grant.pk for grant in ended]


def grants_of_removed(namespace_ids: list[int], *, cause: str) -> None:
    """Namespaces gone (decommissioned, an environment ended): their grants that had not
    ended end now, with them (their bindings went with the namespace)."""
    now = timezone.now()
    ending = list(
        AccessGrant.objects.filter(
            namespace_id__in=namespace_ids, ended_at__isnull=True, starts_at__isnull=False
        ).select_related("person", "namespace")
    )
    if not ending:
        return
    AccessGrant.objects.filter(pk__in=[grant.pk for grant in ending], expires_at__gt=now).update(
        expires_at=now
    )
    AccessGrant.objects.filter(pk__in=[grant.pk for grant in ending]).update(ended_at=now)
    audit.record_all(
        [
            audit.event(
                actor=None,
                action="access.ended",
                obj=grant.namespace,
                tenant_id=grant.namespace.tenant_id,
                after={
                    "grant": grant.pk,
                    "request": grant.request_id,
                    "person": grant.person.username,
                    "role": grant.role,
                    "why": "namespace removed",
                    "binding_removed": True,
                    "causes": [cause],
                },
            )
            for grant in ending
        ]
    )
