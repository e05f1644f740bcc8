"""Deploy tokens: a member mints a short-lived token for a pipeline, it is revoked, or it
runs out; each step audited. The token itself is returned once and never stored."""

from __future__ import annotations

import logging
import secrets
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from tenants import audit, policy, provisioner
from tenants.choices import NamespaceState, PolicyOutcome
from tenants.errors import ClusterUnavailable, InvalidInput, NotAllowed
from tenants.models import DeployToken, EnvironmentTier, Namespace, User
from tenants.provisioner import IssuedToken
from tenants.selectors.deploy_tokens import (
    LONGEST,
    SHORTEST,
    may_revoke_deploy_token,
    why_no_deploy_token,
    why_token_ends,
)
from tenants.services.sleep import note_deploy
from tenants.signals import deploy_token_ended

logger = logging.getLogger(__name__)
SERVICE_ACCOUNT_PREFIX = "berth-deploy-"
PURPOSE_MAX = 200
REMOVED_PER_RUN = 200  # beat's next run takes the rest


def _checked_lifetime(ttl_minutes: object) -> timedelta:
    shortest, longest = int(SHORTEST.total_seconds() // 60), int(LONGEST.total_seconds() // 60)
    try:
        minutes = int(str(ttl_minutes))
    except ValueError:
        minutes = 0
    if not shortest <= minutes <= longest:
        raise InvalidInput.of(
            {"ttl_minutes": f"A deploy token lives {shortest} to {longest} minutes."}
        )
    return timedelta(minutes=minutes)


def _refused_by_rules(*, user: User, namespace: Namespace, source_ip: str | None) -> None:
    """A rule that denies it refuses it. One asking for approval does not: nobody approves
    a token a pipeline waits for, and the tier's setting already says who may have one."""
    decision = policy.decide(policy.deploy_token_attributes(namespace=namespace, requester=user))
    if decision.outcome != PolicyOutcome.DENY:
        return
    reason = decision.message or "it denies them"
    audit.record(
        actor=user,
        action="deploy_token.refuse",
        obj=namespace,
        tenant_id=namespace.tenant_id,
        source_ip=source_ip,
        after={"rule": decision.rule, "reason": reason},
    )
    raise NotAllowed(f"The approval rule {decision.rule!r} refuses this deploy token: {reason}")


def mint_deploy_token(
    *,
    user: User,
    namespace: Namespace,
    ttl_minutes: object,
    purpose: str = "",
    source_ip: str | None = None,
) -> tuple[DeployToken, IssuedToken]:
    """Mint a token for `namespace` with the rights of its tier's members; returns the
    record and the token (shown once). Refused (NotAllowed) for someone who may not, a tier
    that does not allow it, or a rule; nothing is kept when the cluster refuses."""
    lifetime = _checked_lifetime(ttl_minutes)
    purpose = purpose.strip()
    if len(purpose) > PURPOSE_MAX:
        raise InvalidInput.of({"purpose": f"At most {PURPOSE_MAX} characters."})
    why_not = why_no_deploy_token(user, namespace)
    if why_not:
        raise NotAllowed(why_not)
    _refused_by_rules(user=user, namespace=namespace, source_ip=source_ip)
    now = timezone.now()
    token = DeployToken.objects.create(
        namespace=namespace,
        minted_by=user,
        service_account=SERVICE_ACCOUNT_PREFIX + secrets.token_hex(5),
        cluster_role=namespace.tier.member_cluster_role,
        audience=settings.DEPLOY_TOKEN_AUDIENCE,
        purpose=purpose,
        created_at=now,
        expires_at=now + lifetime,
    )
    try:
        issued = provisioner.issue_deploy_token(token)
    except ClusterUnavailable:
        _undo(token)
        raise
    with transaction.atomic():
        # The cluster's word on when it ends and whom it is for.
        token.expires_at = issued.expires_at
        token.audience = ",".join(issued.audiences)[:255] or token.audience
        token.save(update_fields=["expires_at", "audience"])
        audit.record(
            actor=user,
            action="deploy_token.mint",
            obj=token,
            tenant_id=namespace.tenant_id,
            source_ip=source_ip,
            after={
                "namespace": namespace.name,
                "service_account": token.service_account,
                "cluster_role": token.cluster_role,
                "expires_at": token.expires_at.isoformat(),
                "audience": token.audience,
                "purpose": purpose,
            },
        )
        note_deploy(namespace)
    return token, issued


def _undo(token: DeployToken) -> None:
    """A mint the cluster refused halfway: remove what it made, or leave the record revoked
    so that the periodic removal finishes it."""
    try:
        provisioner.remove_deploy_token(token)
    except ClusterUnavailable:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
        return
    token.delete()


def revoke_deploy_token(
    *, user: User, token: DeployToken, source_ip: str | None = None
) -> DeployToken:
    """Revoke it: its ServiceAccount and binding go, which ends the token at once. Where the
    cluster cannot be reached, the record says revoked and removal is retried; raises
    ClusterUnavailable to say the token still works until then."""
    if not may_revoke_deploy_token(user, token):
        raise NotAllowed("Only the tenant's owners and members may revoke its deploy tokens.")
    return _revoke(user=user, token=token, source_ip=source_ip)


def _revoke(
    *, user: User | None, token: DeployToken, source_ip: str | None, reason: str = ""
) -> DeployToken:
    """Revoke it (`user` None: Berth, for `reason`) and remove it from the cluster."""
    with transaction.atomic():
        locked = DeployToken.objects.select_for_update().get(pk=token.pk)
        if locked.revoked_at is not None:
            return locked
        locked.revoked_at = timezone.now()
        locked.revoked_by = user
        locked.save(update_fields=["revoked_at", "revoked_by"])
        audit.record(
            actor=user,
            action="deploy_token.revoke",
            obj=locked,
            tenant_id=token.namespace.tenant_id,
            source_ip=source_ip,
            after={
                "namespace": token.namespace.name,
                "service_account": locked.service_account,
                **({"reason": reason} if reason else {}),
            },
        )
        if reason:
            transaction.on_commit(
                lambda: deploy_token_ended.send(
                    sender=DeployToken, token_id=locked.pk, reason=reason
                )
            )
    _remove(locked)
    return locked


def _remove(token: DeployToken) -> None:
    # A decommissioned namespace took its ServiceAccount with it.
    if token.namespace.state != NamespaceState.DECOMMISSIONED:
        provisioner.remove_deploy_token(token)
    token.removed_at = timezone.now()
    token.save(update_fields=["removed_at"])


def end_unentitled_deploy_tokens(
    *,
    minted_by: User | None = None,
    tier: EnvironmentTier | None = None,
    namespace: Namespace | None = None,
) -> list[DeployToken]:
    """Revoke the live tokens (those `minted_by`, in `tier`'s or `namespace`'s; every live
    one when none is given) that hold a right that ended (selectors.why_token_ends): each
    audited with its reason and its minter told. Called where a right ends (sign-in's
    membership sync, a tier's change, a namespace leaving active) and by beat for whatever
    ended elsewhere. A cluster that does not answer leaves the token revoked for beat's
    removal to finish."""
    live = DeployToken.objects.live().select_related(
        "minted_by", "namespace__tenant", "namespace__cluster", "namespace__tier"
    )
    if minted_by is not None:
        live = live.filter(minted_by=minted_by)
    if tier is not None:
        live = live.filter(namespace__tier=tier)
    if namespace is not None:
        live = live.filter(namespace=namespace)
    ended = []
    for token in live:
        reason = why_token_ends(token)
        if reason is None:
            continue
        try:
            ended.append(_revoke(user=None, token=token, source_ip=None, reason=reason))
        except ClusterUnavailable as exc:
            logger.warning("deploy token %s revoked, not removed yet: %s", token.pk, exc)
    return ended


def remove_spent_deploy_tokens() -> dict[str, int]:
    """End the live tokens whose right ended, then remove the ServiceAccounts of expired
    and revoked tokens (beat runs it); a cluster that cannot be reached is tried again next
    time."""
    ended = len(end_unentitled_deploy_tokens())
    removed = failed = 0
    spent = DeployToken.objects.to_remove().select_related(
        "namespace__cluster", "namespace__tenant"
    )[:REMOVED_PER_RUN]
    for token in spent:
        try:
            _remove(token)
        except ClusterUnavailable as exc:
            logger.warning("deploy token %s not removed yet: %s", token.pk, exc)
            failed += 1
        else:
            removed += 1
    return {"ended": ended, "removed": removed, "failed": failed}
