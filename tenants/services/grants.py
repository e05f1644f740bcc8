"""An access request's grant: recorded as the request is admitted, its time started as it is
approved. (Asking and revoking are tenants.services.access.)"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from tenants import audit
from tenants.choices import NamespaceState
from tenants.errors import NotAllowed
from tenants.models import AccessGrant, Namespace, Request, User


def cluster_user_name(person: User) -> str:
    """The user name kube-apiserver gives the person's ID token: the configured prefix and
    their `sub` claim (as the clusters' --oidc-username-claim=sub says)."""
    if not person.oidc_subject:
        raise NotAllowed(
            f"Berth does not know the name the clusters give {person.username}: sign in to "
            "Berth once through the identity provider, then ask again."
        )
    return f"{settings.KUBE_OIDC_USERNAME_PREFIX}{person.oidc_subject}"


def record_grant(tenancy_request: Request) -> AccessGrant:
    """The grant an admitted access request asks for (its payload is validated)."""
    payload = tenancy_request.payload
    namespace = Namespace.objects.select_related("tier").get(
        tenant_id=tenancy_request.tenant_id,
        name=payload["namespace"],
        cluster__name=payload["cluster"],
        state=NamespaceState.ACTIVE,
    )
    return AccessGrant.objects.create(
        request=tenancy_request,
        namespace=namespace,
        person=tenancy_request.requester,
        role=payload["role"],
        cluster_role=namespace.tier.access_roles()[payload["role"]],
        subject=cluster_user_name(tenancy_request.requester),
        duration=timedelta(minutes=payload["minutes"]),
        reason=payload["reason"],
    )


def start_grants(request_ids: Sequence[int]) -> dict[int, dict[str, str]]:
    """The grants of these requests, just approved, start now: what each request's audit
    event adds (the grant's end)."""
    if not request_ids:
        return {}
    now = timezone.now()
    started = {}
    for grant in AccessGrant.objects.filter(request_id__in=request_ids):
        grant.starts_at, grant.expires_at = now, now + grant.duration
        grant.save(update_fields=["starts_at", "expires_at"])
        started[grant.request_id] = {"access_until": grant.expires_at.isoformat()}
    return started


def record_granted(requests: Sequence[Request]) -> None:
    """The audit log's "access.granted": the binding is on the cluster, until when."""
    if not requests:
        return
    grants = AccessGrant.objects.filter(request__in=requests).select_related("person", "namespace")
    audit.record_all(
        [
            audit.event(
                actor=None,
                action="access.granted",
                obj=grant.request,
                tenant_id=grant.namespace.tenant_id,
                after={
                    "grant": grant.pk,
                    "person": grant.person.username,
                    "subject": grant.subject,
                    "namespace": grant.namespace.name,
                    "role": grant.role,
                    "cluster_role": grant.cluster_role,
                    "until": grant.expires_at.isoformat() if grant.expires_at else None,
                    "reason": grant.reason,
                },
            )
            for grant in grants
        ]
    )
