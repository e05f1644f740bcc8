"""Access grants' end as the engine saw it: once a grant is over (expired, revoked, or its
namespace removed) and its binding is gone from the cluster, `ended_at` is set and the audit
log says so (`access.ended`)."""

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
    over = AccessGrant.objects.filter(namespace=namespace, ended_at__isnull=True).filter(
        Q(revoked_at__isnull=False) | Q(expires_at__lte=timezone.now())
    )
    gone = {ref.rpartition("/")[2] for ref in removed}
    ended = [
        grant
        for grant in over.select_related("person", "namespace")
        if all_checked or grant_binding_name(grant.pk) in gone
    ]
    _record_ends(
        [
            (
                grant,
                "revoked" if grant.revoked_at else "expired",
                grant_binding_name(grant.pk) in gone,
            )
            for grant in ended
        ],
        causes=causes,
    )
    return [grant.pk for grant in ended]


def grants_of_removed(namespace_ids: list[int], *, cause: str) -> None:
    """Namespaces gone (decommissioned, an environment ended): their grants that had not
    ended end now, with them (their bindings went with the namespace)."""
    ending = list(
        AccessGrant.objects.filter(
            namespace_id__in=namespace_ids, ended_at__isnull=True, starts_at__isnull=False
        ).select_related("person", "namespace")
    )
    AccessGrant.objects.filter(
        pk__in=[grant.pk for grant in ending], expires_at__gt=timezone.now()
    ).update(expires_at=timezone.now())
    _record_ends([(grant, "namespace removed", True) for grant in ending], causes=[cause])


def _record_ends(ended: list[tuple[AccessGrant, str, bool]], *, causes: list[str]) -> None:
    """(grant, why, whether its binding was removed now) each: ended now, audited."""
    if not ended:
        return
    AccessGrant.objects.filter(pk__in=[grant.pk for grant, _, _ in ended]).update(
        ended_at=timezone.now()
    )
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
                    "why": why,
                    "binding_removed": removed,
                    "causes": causes,
                },
            )
            for grant, why, removed in ended
        ]
    )
