"""What people are told when a request moves or an environment is about to expire: who hears
(e-mail to those who must act or asked) and what the tenant's signed JSON webhook carries.

Composing only: tenants.receivers decides when, tenants.tasks sends (retried there)."""

from __future__ import annotations

from django.conf import settings

from tenants.choices import ApproverRole, RequestKind, Role
from tenants.models import EphemeralEnvironment, Membership, Request, User

EVENTS = {
    "submit": "submitted",
    "approve": "approved",
    "reject": "rejected",
    "mark_ready": "ready",
    "mark_failed": "failed",
}


def recipients(tenancy_request: Request, event: str) -> list[str]:
    """Who hears about it: approvers when it waits, the requester when it moves on."""
    tenant = tenancy_request.tenant
    if event == "submitted" and tenancy_request.state == "submitted":
        deciders = User.objects.filter(is_platform_admin=True)
        if tenancy_request.approver_role == ApproverRole.TENANT_OWNER:
            owners = Membership.objects.filter(tenant=tenant, role=Role.OWNER).values("user_id")
            deciders = deciders | User.objects.filter(pk__in=owners)
        addresses = list(
            deciders.exclude(pk=tenancy_request.requester_id).values_list("email", flat=True)
        )
    else:
        addresses = [tenancy_request.requester.email]
    return sorted({a for a in [*addresses, *tenant.notify_emails] if a})


def event_body(tenancy_request: Request, event: str) -> dict:
    return {
        "event": f"request.{event}",
        "request": {
            "id": tenancy_request.pk,
            "tenant": tenancy_request.tenant.slug,
            "kind": tenancy_request.kind,
            "state": tenancy_request.state,
            "payload": tenancy_request.payload,
            "requester": tenancy_request.requester.username,
            "message": tenancy_request.status_message,
            "url": f"{settings.BERTH_BASE_URL}/requests/{tenancy_request.pk}/",
        },
    }


# Review apps come and go by the dozen, started by CI (which has the API's answer) and ended
# by expiry: people hear only when one is ready, failed, or waits for them.
QUIET_KINDS = {RequestKind.EPHEMERAL, RequestKind.END_ENVIRONMENT}


def wants_email(tenancy_request: Request, event: str) -> bool:
    if tenancy_request.kind not in QUIET_KINDS:
        return True
    if event == "submitted":
        return tenancy_request.state == "submitted"  # held for a decision
    return event != "approved"


def environment_recipients(environment: EphemeralEnvironment) -> list[str]:
    """Who may extend it: its creator and the tenant's owners, plus the tenant's list."""
    owners = Membership.objects.filter(tenant=environment.tenant, role=Role.OWNER).values("user_id")
    addresses = list(User.objects.filter(pk__in=owners).values_list("email", flat=True))
    addresses.append(environment.request.requester.email)
    return sorted({a for a in [*addresses, *environment.tenant.notify_emails] if a})


def environment_body(environment: EphemeralEnvironment, event: str) -> dict:
    return {
        "event": f"environment.{event}",
        "environment": {
            "id": environment.pk,
            "tenant": environment.tenant.slug,
            "project": environment.project.name,
            "env_slug": environment.slug,
            "namespace": environment.namespace.name,
            "expires_at": environment.expires_at.isoformat(),
            "max_expires_at": environment.max_expires_at.isoformat(),
            "url": f"{settings.BERTH_BASE_URL}/environments/{environment.pk}/",
        },
    }
