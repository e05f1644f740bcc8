"""Access on request: a person asks for one of a tier's roles on one namespace, for a while
and with a reason (a request of kind `access`, decided by the owning tenant's rules); the
person, an owner of that tenant or a platform admin may end it early."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from tenants import audit, selectors
from tenants.choices import NamespaceState, RequestKind, RequestState, Role
from tenants.errors import DomainError, InvalidInput, NotAllowed
from tenants.models import AccessGrant, Namespace, User
from tenants.services.grants import cluster_user_name
from tenants.services.requests import submit_request
from tenants.signals import access_grant_revoked

# A grant asked for and not over: a second one for the same person, namespace and role
# would only race it.
OPEN_STATES = (
    RequestState.SUBMITTED,
    RequestState.APPROVED,
    RequestState.PROVISIONING,
    RequestState.READY,
)


def request_access(
    *,
    person: User,
    namespace: str,
    role: str,
    duration: str,
    reason: str,
    cluster: str = "",
    source_ip: str | None = None,
) -> AccessGrant:
    """Ask for `role` on the live namespace named `namespace` (on `cluster` when the name is
    live on more than one) for `duration`. Any member of a tenant may ask, of their own
    tenant or another; the owning tenant's rules decide. Raises InvalidInput by field,
    NotAllowed for someone in no tenant, or without a name on the clusters."""
    if not (selectors.is_platform_admin(person) or person.memberships.exists()):
        raise NotAllowed("Only members of a tenant (or platform admins) may ask for access.")
    cluster_user_name(person)
    found = Namespace.objects.filter(name=namespace, state=NamespaceState.ACTIVE)
    if cluster:
        found = found.filter(cluster__name=cluster)
    live = list(found.select_related("tenant", "cluster")[:2])
    if not live:
        raise InvalidInput.of({"namespace": [f"{namespace!r} is not a live namespace."]})
    if len(live) > 1:
        raise InvalidInput.of(
            {"cluster": [f"{namespace} is live on more than one cluster: name the cluster."]}
        )
    target = live[0]
    already = (
        AccessGrant.objects.filter(
            person=person,
            namespace=target,
            role=role,
            revoked_at__isnull=True,
            request__state__in=OPEN_STATES,
        )
        .exclude(expires_at__lte=timezone.now())
        .first()
    )
    if already is not None:
        raise InvalidInput.of(
            {
                "role": [
                    f"You asked for {role} on {target.name} already (request "
                    f"#{already.request_id}, {already.state}): follow that one."
                ]
            }
        )
    tenancy_request = submit_request(
        tenant=target.tenant,
        kind=RequestKind.ACCESS,
        payload={"namespace": target.name, "role": role, "duration": duration, "reason": reason},
        requester=person,
        source_ip=source_ip,
        own_entry=True,
    )
    return tenancy_request.access_grant


def may_revoke(user: User, grant: AccessGrant) -> bool:
    """The person holding it, an owner of the namespace's tenant, or a platform admin."""
    return (
        grant.person_id == user.pk
        or selectors.is_platform_admin(user)
        or selectors.role_in(user, grant.namespace.tenant) == Role.OWNER
    )


def revoke_grant(*, grant_id: int, actor: User, source_ip: str | None = None) -> AccessGrant:
    """End a grant before its time: the engine removes its binding at once. Raises
    NotAllowed for anyone else, DomainError for a grant that is not under way or live."""
    with transaction.atomic():
        grant = (
            AccessGrant.objects.select_for_update()
            .select_related("namespace__tenant", "request", "person")
            .get(pk=grant_id)
        )
        if not may_revoke(actor, grant):
            raise NotAllowed(
                "Only the person holding it, an owner of its tenant or a platform admin "
                "may revoke a grant."
            )
        if grant.state not in ("granting", "active"):
            raise DomainError(
                f"This grant is {grant.state}: only one approved and not over can be revoked"
                + (" (cancel or reject its request instead)." if grant.state == "pending" else ".")
            )
        grant.revoked_at, grant.revoked_by = timezone.now(), actor
        grant.save(update_fields=["revoked_at", "revoked_by"])
        audit.record(
            actor=actor,
            action="access.revoked",
            obj=grant.request,
            tenant_id=grant.namespace.tenant_id,
            source_ip=source_ip,
            after={
                "grant": grant.pk,
                "person": grant.person.username,
                "namespace": grant.namespace.name,
                "role": grant.role,
                "was_until": grant.expires_at.isoformat() if grant.expires_at else None,
            },
        )
        grant_id, username = grant.pk, actor.username
        transaction.on_commit(
            lambda: access_grant_revoked.send(sender=AccessGrant, grant_id=grant_id, actor=username)
        )
    return grant


def record_grant_kubeconfig(
    *, grant: AccessGrant, actor: User, credentials: str, source_ip: str | None = None
) -> None:
    """The audit log's "access.kubeconfig_downloaded": the holder took the grant's "Use it"
    (the page's download or the API's kubeconfig of the grant's namespace)."""
    audit.record(
        actor=actor,
        action="access.kubeconfig_downloaded",
        obj=grant.request,
        tenant_id=grant.namespace.tenant_id,
        source_ip=source_ip,
        after={
            "grant": grant.pk,
            "namespace": grant.namespace.name,
            "cluster": grant.namespace.cluster.name,
            "role": grant.role,
            "credentials": credentials,
            "until": grant.expires_at.isoformat() if grant.expires_at else None,
        },
    )
