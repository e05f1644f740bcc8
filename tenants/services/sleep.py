"""Hibernation's writes: waking a namespace on demand, and asking for a new sleep schedule
(a request of kind "sleep", decided by the rules like any other). The provisioner carries
both out through the namespace's key (provisioning.reconcile.hibernation)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from tenants import audit, selectors
from tenants.choices import NamespaceState, RequestKind, Role
from tenants.errors import DomainError, InvalidInput, NotAllowed
from tenants.models import Namespace, Request, User
from tenants.selectors.sleep import wake_end
from tenants.services.requests import submit_request
from tenants.signals import namespace_sleep_changed

WAKERS = (Role.OWNER, Role.MEMBER)


def may_wake(user: User, namespace: Namespace) -> bool:
    return selectors.is_platform_admin(user) or selectors.role_in(user, namespace.tenant) in WAKERS


def wake_namespace(
    *, namespace_id: int, actor: User, hours: int | None = None, source_ip: str | None = None
) -> datetime:
    """Keep a namespace awake from now for `hours` (at most its tier's longest wake, never
    past its schedule's next sleep); its workloads come back at once. Returns until when.
    Raises NotAllowed for viewers and outsiders, InvalidInput for hours out of bounds,
    DomainError for a namespace that does not sleep or is not live."""
    with transaction.atomic():
        namespace = (
            Namespace.objects.select_for_update()
            .select_related("tenant", "tier", "cluster")
            .get(pk=namespace_id)
        )
        if not may_wake(actor, namespace):
            raise NotAllowed(
                "Only the namespace's owners and members or a platform admin may wake it."
            )
        if namespace.state != NamespaceState.ACTIVE:
            raise DomainError(
                f"{namespace.name} is {namespace.state}: only a live namespace wakes."
            )
        if not namespace.sleeps():
            raise DomainError(f"{namespace.name} has no sleep schedule: it is always awake.")
        longest = namespace.tier.wake_max_hours
        if hours is not None and not 1 <= hours <= longest:
            raise InvalidInput.of(
                {
                    "hours": [
                        f"A wake of a {namespace.tier.slug} namespace lasts 1 to {longest} hours."
                    ]
                }
            )
        now = timezone.now()
        until = wake_end(namespace, hours=hours, at=now)
        before = namespace.awake_until
        namespace.awake_until = until
        namespace.save(update_fields=["awake_until"])
        audit.record(
            actor=actor,
            action="namespace.woken",
            obj=namespace,
            tenant_id=namespace.tenant_id,
            source_ip=source_ip,
            before={"awake_until": before.isoformat() if before else None},
            after={"awake_until": until.isoformat(), "asleep_then": namespace.asleep},
        )
        settle_sleep_soon(namespace.pk, actor.username)
    return until


def request_sleep_schedule(
    *, namespace: Namespace, requester: User, schedule: dict[str, Any], source_ip: str | None = None
) -> Request:
    """Ask for a namespace's sleep schedule to change: `mode` tier, custom (with
    `sleep_weekdays`, `sleep_at`, `wake_at`, `sleep_time_zone`) or never."""
    return submit_request(
        tenant=namespace.tenant,
        kind=RequestKind.SLEEP,
        payload={**schedule, "namespace": namespace.name},
        requester=requester,
        source_ip=source_ip,
    )


def settle_sleep_soon(namespace_id: int, actor: str = "") -> None:
    """The provisioner is told to settle this namespace's sleep once the caller's
    transaction commits (a wake, a tier's schedule changed, a deploy); `actor` makes it a
    wake by that person."""
    transaction.on_commit(
        lambda: namespace_sleep_changed.send(
            sender=Namespace, namespace_id=namespace_id, actor=actor
        )
    )


def note_deploy(namespace: Namespace) -> None:
    """A deploy is on its way (a deploy token was minted): an idle-sleeping namespace's idle
    time starts again, and one asleep for idleness wakes now."""
    Namespace.objects.filter(pk=namespace.pk).update(last_deploy_at=timezone.now())
    if namespace.idle_sleep_hours() is not None:
        settle_sleep_soon(namespace.pk)
