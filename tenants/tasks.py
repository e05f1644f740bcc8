"""Celery tasks of the domain: notification delivery, retried with backoff so a slow mail
server or a flaky webhook receiver never holds up a request; and the expiry of ephemeral
environments, which beat runs."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging

import urllib3
from celery import shared_task
from celery.utils.time import get_exponential_backoff_interval
from django.core.mail import EmailMessage, get_connection, send_mail

from tenants import services
from tenants.models import EphemeralEnvironment, Request, Tenant
from tenants.notifications import (
    actors_of,
    email_text,
    environment_body,
    environment_recipients,
    recipients,
)

logger = logging.getLogger(__name__)
SIGNATURE_HEADER = "X-Berth-Signature"


def enqueue(task, *args: object) -> bool:  # noqa: ANN001 - a Celery task
    """Queue a task; when the broker is down, say so and go on: whatever was saved stays
    saved (the database is the truth), and the work is found again by the sweep (requests)
    or lost with a warning (a notification), never turned into an error page."""
    try:
        task.delay(*args)
    except Exception as error:  # noqa: BLE001 - kombu, redis or socket errors alike
        logger.warning("broker unavailable, %s not queued (%s)", task.name, type(error).__name__)
        return False
    return True


class WebhookRefused(Exception):
    """The receiver answered with an error status; worth retrying."""


def signature(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


@shared_task(bind=True, name="tenants.send_request_emails", max_retries=5)
def send_request_emails(self, request_ids: list[int], event: str) -> int:  # noqa: ANN001 - Celery task
    """The e-mail of each of these requests' move to whoever should hear of it, over one
    connection to the mail server. When the server fails, the ones not sent yet are tried
    again later, with backoff: none is sent twice."""
    moved = list(Request.objects.select_related("tenant", "requester")
                 .filter(pk__in=request_ids).order_by("pk"))
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
                logger.warning("e-mail of %s not sent (%s): tried again later",
                               event, type(error).__name__)
                raise self.retry(args=(unsent, event), exc=error, countdown=
                                 get_exponential_backoff_interval(
                                     factor=1, retries=self.request.retries, maximum=600,
                                     full_jitter=True)) from error
    return sent


@shared_task(
    name="tenants.send_expiry_warning",
    autoretry_for=(OSError,),
    retry_backoff=True,
    retry_backoff_max=600,
    max_retries=5,
)
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
    tenant = Tenant.objects.get(pk=tenant_id)
    if not tenant.webhook_url:
        return 0
    body = json.dumps(event, sort_keys=True).encode()
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "Berth",
        "X-Berth-Event": event["event"],
    }
    if tenant.webhook_secret:
        headers[SIGNATURE_HEADER] = signature(tenant.webhook_secret, body)
    response = urllib3.request(
        "POST", tenant.webhook_url, body=body, headers=headers, timeout=10, retries=False
    )
    if response.status >= 300:
        logger.warning("webhook for %s answered %s", tenant.slug, response.status)
        raise WebhookRefused(f"{tenant.webhook_url} answered {response.status}")
    return response.status


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
