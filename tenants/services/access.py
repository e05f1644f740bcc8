"""Access on request: a person asks for one of a tier's roles on one namespace, for a while
and with a reason (a request of kind `access`, decided by the owning tenant's rules); the
person, an owner of that tenant or a platform admin may end it early."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from tenants import audit, selectors
from tenants.choices import NamespaceState, RequestKind, RequestState, Role
from tenants.errors import DomainError, InvalidInput, NotAllowed
from tenants.models import AccessGrant, EnvironmentTier, Namespace, User
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
            .select_related("namespace__tenant", "namespace__cluster", "request", "person")
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
        _end(grant, actor=actor, source_ip=source_ip)
    return grant


def why_grant_ends(grant: AccessGrant) -> str | None:
    """Why a grant under way may not last any longer (None: it may): its person was
    deactivated, or its tier no longer binds its role to the ClusterRole it binds."""
    if not grant.person.is_active:
        return f"{grant.person.username} was deactivated"
    if grant.namespace.tier.access_roles().get(grant.role) != grant.cluster_role:
        return (
            f"the {grant.namespace.tier.slug} tier no longer offers {grant.cluster_role} "
            f"for {grant.role}"
        )
    return None


def end_unentitled_grants(
    *, person: User | None = None, tier: EnvironmentTier | None = None
) -> list[AccessGrant]:
    """Revoke the grants under way (`person`'s, or in `tier`'s namespaces; all when neither
    is given) whose right has ended (why_grant_ends), each audited with its reason: where a
    right ends (a tier's roles changed) and by beat for what ended elsewhere."""
    under_way = AccessGrant.objects.filter(
        revoked_at__isnull=True,
        expires_at__gt=timezone.now(),
        request__state__in=OPEN_STATES,
    ).select_related(
        "person", "request", "namespace__tier", "namespace__tenant", "namespace__cluster"
    )
    if person is not None:
        under_way = under_way.filter(person=person)
    if tier is not None:
        under_way = under_way.filter(namespace__tier=tier)
    ended = []
    for grant in under_way:
        reason = why_grant_ends(grant)
        if reason is not None:
            with transaction.atomic():
                _end(grant, actor=None, reason=reason)
            ended.append(grant)
    return ended


def _end(
    grant: AccessGrant, *, actor: User | None, source_ip: str | None = None, reason: str = ""
) -> None:
    """Inside a transaction: revoked now, audited, and the engine told once it commits."""
    grant.revoked_at, grant.revoked_by = timezone.now(), actor
    grant.save(update_fields=["revoked_at", "revoked_by"])
    audit.record(
        actor=actor,
        action="access.revoked",
        obj=grant.request,
        tenant_id=grant.namespace.tenant_id,
        source_ip=source_ip,
        after={**_facts(grant), **({"reason": reason} if reason else {})},
    )
    grant_id, username = grant.pk, actor.username if actor else ""
    transaction.on_commit(
        lambda: access_grant_revoked.send(sender=AccessGrant, grant_id=grant_id, actor=username)
    )


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
        after={**_facts(grant), "credentials": credentials},
    )


def _facts(grant: AccessGrant) -> dict[str, object]:
    """What the audit log says of a grant in each of its events."""
    return {
        "grant": grant.pk,
        "person": grant.person.username,
        "namespace": grant.namespace.name,
        "cluster": grant.namespace.cluster.name,
        "role": grant.role,
        "until": grant.expires_at.isoformat() if grant.expires_at else None,
    }
