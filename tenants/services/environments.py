"""Ephemeral environments after they start: extended by their owners, ended by people or
at expiry (by an end request approved at once), and their owners warned before.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from tenants import audit, budget, policy, selectors
from tenants.choices import EndCause, EnvironmentState, PolicyOutcome, RequestKind, RequestState
from tenants.errors import DomainError, InvalidInput, NotAllowed
from tenants.kinds import validate_payload
from tenants.kinds.ephemeral import KIND as EPHEMERAL
from tenants.models import EphemeralEnvironment, Namespace, Request, Tenant, User
from tenants.quantities import QuantityError, seconds_to_duration, ttl_to_seconds
from tenants.services.claims import release_claims
from tenants.services.lifecycle import transition
from tenants.services.requests import admit, submit_request

logger = logging.getLogger(__name__)


# Ending an ephemeral environment takes nothing and widens nothing: never held for approval.
ENDING_DECISION = policy.PolicyDecision(
    rule="ephemeral-environment-end", outcome=PolicyOutcome.AUTO_APPROVE
)


def ensure_environment(
    *, tenant: Tenant, payload: dict[str, Any], requester: User, source_ip: str | None = None
) -> tuple[EphemeralEnvironment, bool]:
    """The project's live environment of this slug, or a new one: what CI asks on every push
    to a pull request. True when it was created.

    The one found must deploy the same branch and merge request; one ending is refused (a
    push after the close). A push by those who may extend it restarts its TTL (`ttl`, or the
    time it was given), never past its maximum."""
    if not selectors.may_request(requester, tenant):
        raise NotAllowed(f"You are not a member of {tenant.slug}; ask one of its owners.")
    with transaction.atomic():
        # One at a time per tenant, as admission is: two pushes at once make one environment.
        Tenant.objects.select_for_update().filter(pk=tenant.pk).first()
        found = (
            EphemeralEnvironment.objects.select_related("request", "tenant", "project")
            .filter(
                tenant=tenant,
                project__name=payload.get("project", ""),
                slug=payload.get("env_slug", ""),
            )
            .exclude(state=EnvironmentState.ENDED)
            .first()
        )
        if found is None:
            created = submit_request(
                tenant=tenant,
                kind=RequestKind.EPHEMERAL,
                payload=payload,
                requester=requester,
                source_ip=source_ip,
            )
            return EphemeralEnvironment.objects.get(request=created), True
    _refuse_another_deploy(found, payload)
    if found.state == EnvironmentState.ENDING:
        raise DomainError(
            f"Environment {found.slug} of {found.project.name} is ending (#{found.pk}): "
            "create it again once it has ended."
        )
    if selectors.may_manage_environment(requester, found):
        ttl = _ttl_of(payload.get("ttl")) or int(found.request.payload["ttl_seconds"])
        room = int((found.max_expires_at - timezone.now()).total_seconds())
        if room >= 60:
            found = extend_environment(
                environment_id=found.pk,
                actor=requester,
                ttl_seconds=min(ttl, room),
                source_ip=source_ip,
            )
    return found, False


def _refuse_another_deploy(found: EphemeralEnvironment, payload: dict[str, Any]) -> None:
    """A slug names one deploy: another branch or merge request under it is a mistake in the
    pipeline (two pull requests sharing a slug), not a new push."""
    problems = {
        field: [
            f"{found.slug} of {found.project.name} deploys {what} {had!r}, not {wanted!r}: "
            "end it first, or give this one its own slug."
        ]
        for field, what, had, wanted in (
            ("branch", "branch", found.branch, payload.get("branch") or ""),
            ("mr_id", "merge request", found.merge_request, payload.get("mr_id") or ""),
        )
        if wanted and had and wanted != had
    }
    if problems:
        raise InvalidInput.of(problems)


def _ttl_of(text: Any) -> int | None:
    if not text:
        return None
    try:
        return ttl_to_seconds(str(text))
    except QuantityError as exc:
        raise InvalidInput.of({"ttl": [str(exc)]}) from exc


def extend_environment(
    *, environment_id: int, actor: User, ttl_seconds: int, source_ip: str | None = None
) -> EphemeralEnvironment:
    """Let an environment live `ttl_seconds` from now, never past its maximum TTL."""
    with transaction.atomic():
        environment = (
            EphemeralEnvironment.objects.select_for_update(of=("self",))
            .select_related("tenant", "request")
            .get(pk=environment_id)
        )
        if not selectors.may_manage_environment(actor, environment):
            raise NotAllowed(
                "Only the environment's creator, the tenant's owners and platform admins may "
                "extend it."
            )
        if environment.state not in (EnvironmentState.STARTING, EnvironmentState.LIVE):
            raise DomainError(
                f"Environment {environment.slug} is {environment.get_state_display().lower()}: "
                "it can no longer be extended."
            )
        now = timezone.now()
        wanted = now + timedelta(seconds=ttl_seconds)
        if wanted > environment.max_expires_at:
            left = int((environment.max_expires_at - now).total_seconds()) // 60 * 60
            raise InvalidInput.of(
                {
                    "ttl": [
                        f"{environment.slug} may live until "
                        f"{environment.max_expires_at:%Y-%m-%d %H:%M} "
                        f"UTC at most (its tier's maximum TTL): ask for at most "
                        f"{seconds_to_duration(max(left, 0))}."
                    ]
                }
            )
        before = environment.expires_at
        environment.expires_at, environment.warned_at = wanted, None
        environment.save(update_fields=["expires_at", "warned_at"])
        if environment.owns_namespace:
            Namespace.objects.filter(pk=environment.namespace_id).update(expires_at=wanted)
        audit.record(
            actor=actor,
            action="environment.extend",
            obj=environment,
            tenant_id=environment.tenant_id,
            before={"expires_at": before.isoformat()},
            after={"expires_at": wanted.isoformat()},
            source_ip=source_ip,
        )
    return environment


def end_environment(
    *,
    environment_id: int,
    actor: User | None,
    cause: str,
    reason: str = "",
    source_ip: str | None = None,
) -> Request | None:
    """End an ephemeral environment: its namespace (if its own) is deleted and its GitOps
    files removed, in one commit, by an end request that is approved at once.

    `actor` None is Berth itself (expiry). One not yet decided is simply cancelled
    (returns None). Ending one that is already ending or ended raises DomainError."""
    environment = EphemeralEnvironment.objects.select_related("tenant", "request").get(
        pk=environment_id
    )
    tenant = environment.tenant
    if actor is not None and not selectors.may_end_environment(actor, environment):
        raise NotAllowed(
            f"Only members and owners of {tenant.slug} (and platform admins) may end its "
            "environments."
        )
    if (
        environment.state == EnvironmentState.STARTING
        and environment.request.state == RequestState.SUBMITTED
    ):
        transition(
            request_id=environment.request_id,
            action="cancel",
            actor=actor,
            message=f"Environment {environment.slug} ended before it was decided ({cause}).",
            source_ip=source_ip,
            side_effect=release_claims,
        )
        return None
    cleaned = validate_payload(
        kind=RequestKind.END_ENVIRONMENT,
        tenant=tenant,
        payload={"environment": environment_id, "cause": cause, "reason": reason},
    )
    with transaction.atomic():
        locked = EphemeralEnvironment.objects.select_for_update().get(pk=environment_id)
        if locked.state == EnvironmentState.ENDING or locked.state == EnvironmentState.ENDED:
            raise DomainError(f"Environment {locked.slug} is already {locked.state}.")
        return admit(
            tenant=tenant,
            kind=RequestKind.END_ENVIRONMENT,
            cleaned=cleaned,
            requester=actor or environment.request.requester,
            decision=ENDING_DECISION,
            source_ip=source_ip,
            system=actor is None,
        )


def expire_environments(*, now: Any = None) -> list[int]:
    """End every environment past its expiry; returns their ids. Safe to run concurrently
    and repeatedly: one already ending is skipped."""
    now = now or timezone.now()
    due = EphemeralEnvironment.objects.filter(
        expires_at__lte=now, state__in=(EnvironmentState.STARTING, EnvironmentState.LIVE)
    ).values_list("pk", flat=True)
    ended = []
    for environment_id in list(due):
        try:
            end_environment(
                environment_id=environment_id,
                actor=None,
                cause=EndCause.EXPIRED,
                reason="Its time to live ran out.",
            )
        except DomainError as exc:
            # Another worker got there first, or it is still being provisioned: next round.
            logger.info("environment %s not ended yet: %s", environment_id, exc)
            continue
        ended.append(environment_id)
    return ended


def environments_to_warn(*, now: Any = None) -> list[EphemeralEnvironment]:
    """Live environments expiring within the warning window whose owners were not told;
    each is marked as warned (and audited) as it is returned."""
    now = now or timezone.now()
    warned = []
    due = EphemeralEnvironment.objects.filter(
        state=EnvironmentState.LIVE,
        warned_at__isnull=True,
        expires_at__gt=now,
        expires_at__lte=now + settings.EXPIRY_WARNING,
    ).values_list("pk", flat=True)
    for environment_id in list(due):
        with transaction.atomic():
            taken = EphemeralEnvironment.objects.filter(
                pk=environment_id, warned_at__isnull=True
            ).update(warned_at=now)
            if not taken:
                continue  # another beat run warned it
            environment = EphemeralEnvironment.objects.select_related("tenant", "project").get(
                pk=environment_id
            )
            audit.record(
                actor=None,
                action="environment.expiry_warning",
                obj=environment,
                tenant_id=environment.tenant_id,
                after={"expires_at": environment.expires_at.isoformat()},
            )
        warned.append(environment)
    return warned


def ephemeral_preview(user: User, tenant: Tenant, payload: dict) -> dict:
    """What creating this ephemeral environment would do (its namespace first of all),
    without creating anything. Raises what submitting would: bad input, budget, membership."""
    if not selectors.may_request(user, tenant):
        raise NotAllowed(f"You are not a member of {tenant.slug}; ask one of its owners.")
    cleaned = validate_payload(kind=EPHEMERAL.value, tenant=tenant, payload=payload)
    budget.check_fits(tenant=tenant, wanted=EPHEMERAL.demand(tenant=tenant, payload=cleaned))
    return cleaned
