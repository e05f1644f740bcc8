"""Celery tasks of the domain: notification delivery, retried with backoff so a slow mail
server or a flaky webhook receiver never holds up a request; the repository check, which
no web request waits for; and what beat runs: the expiry of ephemeral environments, the
budget alerts, the closing of months, yesterday's measured usage."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging

import urllib3
from celery import shared_task
from celery.utils.time import get_exponential_backoff_interval
from django.core.mail import EmailMessage, get_connection, send_mail
from django.utils.dateparse import parse_datetime

from tenants import provisioner, services
from tenants.egress import (
    Destination,
    EgressRefused,
    Unresolvable,
    check_webhook_url,
    connection_pools,
)
from tenants.models import DeployToken, EphemeralEnvironment, Request, Tenant
from tenants.notifications import (
    actors_of,
    budget_email_text,
    budget_recipients,
    email_text,
    environment_body,
    environment_recipients,
    recipients,
)
from tenants.queue import enqueue
from tenants.services.usage_history import collect_recent_usage

logger = logging.getLogger(__name__)
SIGNATURE_HEADER = "X-Berth-Signature"
# A single e-mail: a mail server that does not answer is asked again, backing off to 10 min.
MAIL_RETRIES = {
    "autoretry_for": (OSError,),
    "retry_backoff": True,
    "retry_backoff_max": 600,
    "max_retries": 5,
}


class WebhookRefused(Exception):
    """The receiver answered with an error status, or its name did not resolve; worth
    retrying."""


def signature(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


@shared_task(bind=True, name="tenants.send_request_emails", max_retries=5)
def send_request_emails(self, request_ids: list[int], event: str) -> int:
    """The e-mail of each of these requests' move to whoever should hear of it, over one
    connection to the mail server. When the server fails, the ones not sent yet are tried
    again later, with backoff: none is sent twice."""
    moved = list(
        Request.objects.select_related("tenant", "requester")
        .filter(pk__in=request_ids)
        .order_by("pk")
    )
    actors = actors_of(request_ids, event)
    sent = 0
    with get_connection() as connection:
        for position, tenancy_request in enumerate(moved):
            to = recipients(tenancy_request, event, actors=actors)
            if not to:
                continue
            subject, body = email_text(tenancy_request, event)
            try:
                sent += connection.send_messages([EmailMessage(subject, body, None, to)])
            except OSError as error:
                unsent = [r.pk for r in moved[position:]]
                logger.warning(
                    "e-mail of %s not sent (%s): tried again later", event, type(error).__name__
                )
                raise self.retry(
                    args=(unsent, event),
                    exc=error,
                    countdown=get_exponential_backoff_interval(
                        factor=1, retries=self.request.retries, maximum=600, full_jitter=True
                    ),
                ) from error
    return sent


@shared_task(name="tenants.send_expiry_warning", **MAIL_RETRIES)
def send_expiry_warning(environment_id: int) -> int:
    environment = EphemeralEnvironment.objects.select_related(
        "tenant", "project", "namespace", "request__requester"
    ).get(pk=environment_id)
    body = environment_body(environment, "expiring")["environment"]
    lines = [
        f"The ephemeral environment {body['env_slug']} of {body['project']} "
        f"(namespace {body['namespace']}) expires at {body['expires_at']}.",
        "At expiry its namespace is deleted and its GitOps files are removed.",
        f"To keep it, extend it (up to {body['max_expires_at']}) on its page:",
        body["url"],
    ]
    return send_mail(
        subject=f"[Berth] {body['tenant']}: {body['project']}/{body['env_slug']} expires soon",
        message="\n".join(lines),
        from_email=None,
        recipient_list=environment_recipients(environment),
    )


@shared_task(
    name="tenants.deliver_webhook",
    autoretry_for=(WebhookRefused, urllib3.exceptions.HTTPError),
    retry_backoff=True,
    retry_backoff_max=600,
    max_retries=6,
)
def deliver_webhook(tenant_id: int, event: dict) -> int:
    """POST the signed event to the tenant's webhook; the answer's status (0: not sent).

    The URL is checked again here (DNS may have changed since it was saved) and the
    connection goes to the address that was checked, with the URL's name as Host and for
    TLS. A refused address is never retried; a redirect is not followed (its target was
    never checked) and not retried either: both are logged for the operator."""
    tenant = Tenant.objects.get(pk=tenant_id)
    if not tenant.webhook_url:
        return 0
    try:
        destination = check_webhook_url(tenant.webhook_url)
    except Unresolvable as exc:
        raise WebhookRefused(f"webhook of {tenant.slug}: {exc.message}") from exc
    except EgressRefused as exc:
        logger.warning("webhook for %s not sent: %s", tenant.slug, exc.message)
        return 0
    body = json.dumps(event, sort_keys=True).encode()
    headers = {
        "Host": destination.host_header,
        "Content-Type": "application/json",
        "User-Agent": "Berth",
        "X-Berth-Event": event["event"],
    }
    if tenant.webhook_secret:
        headers[SIGNATURE_HEADER] = signature(tenant.webhook_secret, body)
    response = _post(destination, body, headers)
    if 300 <= response.status < 400:
        logger.warning(
            "webhook for %s answered %s, a redirect: not followed (set the webhook "
            "URL to where it points)",
            tenant.slug,
            response.status,
        )
        return response.status
    if response.status >= 300:
        logger.warning("webhook for %s answered %s", tenant.slug, response.status)
        raise WebhookRefused(f"the webhook of {tenant.slug} answered {response.status}")
    return response.status


def _post(
    destination: Destination, body: bytes, headers: dict[str, str]
) -> urllib3.BaseHTTPResponse:
    """POST to the first of the checked addresses that takes the connection."""
    last = WebhookRefused(f"{destination.host} has no address")
    for pool in connection_pools(destination, timeout=10):
        try:
            with pool:
                return pool.urlopen(
                    "POST",
                    destination.path,
                    body=body,
                    headers=headers,
                    redirect=False,
                    assert_same_host=False,
                )
        except urllib3.exceptions.NewConnectionError as error:
            last = error
    raise last


@shared_task(name="tenants.check_repository")
def check_repository(tenant_id: int, queued_at: str) -> bool:
    """Can Berth write the tenant's repository with its credential? The answer is stored on
    the tenant (unless a newer check was queued meanwhile); git's commands run with the short
    timeout of an answer a person waits for."""
    when = parse_datetime(queued_at)
    tenant = Tenant.objects.filter(pk=tenant_id, repository_check_queued_at=when).first()
    if tenant is None:
        return False  # gone, or a newer check is queued
    check = provisioner.check_repository(tenant)
    return services.record_repository_check(
        tenant_id=tenant_id, queued_at=when, ok=check.ok, message=check.message
    )


# A change to any of these is checked again.
REPOSITORY_FIELDS = frozenset(
    {
        "gitops_repo_url",
        "gitops_branch",
        "gitops_credentials",
        # Merge-request mode: the forge's word on the token is asked too.
        "changes_by_pull_request",
        "forge_kind",
        "forge_api_url",
        "forge_token",
    }
)


def request_repository_check(tenant: Tenant) -> None:
    """Mark the tenant's repository check pending and queue it for a worker; when the queue
    is down, say so on the tenant instead of pending forever."""
    queued_at = services.queue_repository_check(tenant=tenant)
    if not enqueue(check_repository, tenant.pk, queued_at.isoformat()):
        services.record_repository_check(
            tenant_id=tenant.pk,
            queued_at=queued_at,
            ok=None,
            message="The repository was not checked: the task queue is unavailable. Save "
            "the repository settings again to check it.",
        )
    # What is known now (an answer already, when tasks run where they are queued).
    tenant.refresh_from_db(
        fields=[
            "repository_check_queued_at",
            "repository_check_ok",
            "repository_check_message",
            "repository_checked_at",
        ]
    )


@shared_task(name="tenants.expire_environments")
def expire_environments() -> dict[str, list[int]]:
    """Warn the owners of environments about to expire; end those whose time is up (their
    end requests are approved at once and provisioned like any other)."""
    warned = services.environments_to_warn()
    for environment in warned:
        warn_expiring(environment)
    return {"warned": [e.pk for e in warned], "ended": services.expire_environments()}


def warn_expiring(environment: EphemeralEnvironment) -> None:
    """Queue the expiry warning: e-mail to those who may extend it, and the webhook."""
    if environment_recipients(environment):
        enqueue(send_expiry_warning, environment.pk)
    if environment.tenant.webhook_url:
        enqueue(deliver_webhook, environment.tenant_id, environment_body(environment, "expiring"))


@shared_task(name="tenants.check_budget_alerts")
def check_budget_alerts(tenant_ids: list[int] | None = None) -> int:
    """Tell the thresholds of cost and budget reached this month and not told yet: every
    tenant's (beat), or these tenants' (one of their requests just became Ready)."""
    tenants = None if tenant_ids is None else list(Tenant.objects.filter(pk__in=tenant_ids))
    return len(services.check_budget_alerts(tenants=tenants))


@shared_task(name="tenants.send_budget_alert", **MAIL_RETRIES)
def send_budget_alert(tenant_id: int, event: dict) -> int:
    """The budget alert's e-mail to the tenant's owners and its own list."""
    to = budget_recipients(Tenant.objects.get(pk=tenant_id))
    subject, body = budget_email_text(event)
    return send_mail(subject=subject, message=body, from_email=None, recipient_list=to) if to else 0


@shared_task(name="tenants.send_deploy_token_ended", **MAIL_RETRIES)
def send_deploy_token_ended(token_id: int, reason: str) -> int:
    """Tell the minter that Berth revoked their deploy token, and why: a pipeline using it
    fails from now on."""
    token = DeployToken.objects.select_related("minted_by", "namespace").get(pk=token_id)
    if not token.minted_by.email:
        return 0
    return send_mail(
        subject=f"[Berth] your deploy token for {token.namespace.name} was revoked",
        message="\n".join(
            [
                f"Berth revoked the deploy token {token.service_account} you minted for "
                f"{token.namespace.name} ({token.purpose or 'no purpose given'}).",
                f"Why: {reason}",
                "A pipeline using it is refused by the cluster from now on.",
            ]
        ),
        from_email=None,
        recipient_list=[token.minted_by.email],
    )


@shared_task(name="tenants.remove_spent_deploy_tokens")
def remove_spent_deploy_tokens() -> dict[str, int]:
    """Remove the ServiceAccounts of deploy tokens that expired or were revoked."""
    return services.remove_spent_deploy_tokens()


@shared_task(name="tenants.end_unentitled_grants")
def end_unentitled_grants() -> list[int]:
    """Access grants whose right ended elsewhere (their person deactivated, their tier's
    roles changed outside the admin site) revoked: the engine removes their bindings."""
    return [grant.pk for grant in services.end_unentitled_grants()]


@shared_task(name="tenants.close_months")
def close_months() -> list[str]:
    """Close the months that are over into rows that never change (showback)."""
    return [f"{month:%Y-%m}" for month in services.close_due_months()]


@shared_task(name="tenants.collect_usage")
def collect_usage() -> dict[str, str]:
    """Measured usage per namespace of yesterday, and of any day of the week before it not
    collected yet (showback's used against allocated): day → rows stored or the problem."""
    return {
        f"{each.day}": each.problem or f"{each.stored} measured" for each in collect_recent_usage()
    }
