"""Merge-request mode, the forge's side: a pull request merged lets its request go on, one
closed unmerged sends its request back to its requester; what the forge's webhook says is
heard only under the tenant's signature (HMAC-SHA256 of the body, `X-Hub-Signature-256`), and
acted on only once the forge itself, asked with Berth's token, says the same: whoever holds
the webhook secret (a repository admin who set the hook up) cannot make an unmerged change
go on.
The provisioner opens, reads and rebases the pull requests (provisioning.reconcile.pull_requests)
and reports here, as the webhook does."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
from typing import Any

from django.db import transaction

from tenants import provisioner
from tenants.choices import PullRequestState, RequestState
from tenants.errors import DomainError, ForgeUnavailable
from tenants.models import PullRequest, Request, Tenant
from tenants.services.claims import release_claims
from tenants.services.lifecycle import resume_merged, return_unmerged

logger = logging.getLogger(__name__)

SIGNATURE_HEADER = "X-Hub-Signature-256"


class BadSignature(DomainError):
    """The event is not signed with the tenant's forge webhook secret."""


class UnknownPullRequest(DomainError):
    """The event names no pull request Berth opened for the tenant."""


def signed(secret: str, body: bytes, header: str) -> bool:
    expected = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return bool(secret) and hmac.compare_digest(expected, header or "")


def receive_forge_event(*, tenant_slug: str, event: str, signature: str, body: bytes) -> str:
    """A webhook delivery from the tenant's forge: checked, then acted on. Returns what
    was done, for the log. Raises BadSignature (an unknown tenant, one without a secret, or
    a signature that does not match) or UnknownPullRequest."""
    tenant = Tenant.objects.filter(slug=tenant_slug).first()
    if tenant is None or not signed(tenant.forge_webhook_secret, body, signature):
        raise BadSignature("The event's signature does not match the tenant's webhook secret.")
    if event != "pull_request":
        return f"ignored: {event or 'no'} event"
    try:
        payload = json.loads(body)
        action, pull = payload["action"], payload["pull_request"]
        number, repository = int(pull["number"]), str(payload["repository"]["full_name"])
        branch = str(pull["head"]["ref"])
    except (ValueError, KeyError, TypeError):
        return "ignored: not a pull request event Berth reads"
    if action != "closed":
        return f"ignored: pull request {action}"
    merged = (pull.get("merge_commit_sha") or "") if pull.get("merged") else None
    return _ended(tenant, repository, number, branch, merged)


def receive_gitlab_event(*, tenant_slug: str, event: str, token: str, body: bytes) -> str:
    """A GitLab webhook delivery (`Merge Request Hook`), which carries the tenant's secret
    as it is in `X-Gitlab-Token`: checked, then acted on as `receive_forge_event`."""
    tenant = Tenant.objects.filter(slug=tenant_slug).first()
    secret = tenant.forge_webhook_secret if tenant else ""
    if not secret or not hmac.compare_digest(secret.encode(), token.encode()):
        raise BadSignature("The event's token is not the tenant's webhook secret.")
    if event != "Merge Request Hook":
        return f"ignored: {event or 'no'} event"
    try:
        payload = json.loads(body)
        attributes = payload["object_attributes"]
        action, number = str(attributes["action"]), int(attributes["iid"])
        repository = str(payload["project"]["path_with_namespace"])
        branch = str(attributes["source_branch"])
    except (ValueError, KeyError, TypeError):
        return "ignored: not a merge request event Berth reads"
    if action not in ("merge", "close"):
        return f"ignored: merge request {action}"
    merged = str(attributes.get("merge_commit_sha") or "") if action == "merge" else None
    return _ended(tenant, repository, number, branch, merged)


def _ended(tenant: Tenant, repository: str, number: int, branch: str, merge_sha: str | None) -> str:
    """The forge says the pull request ended: merged (`merge_sha` not None) or closed."""
    row = (
        PullRequest.objects.filter(
            tenant=tenant, repository=repository, number=number, branch=branch
        )
        .order_by("-pk")
        .first()
    )
    if row is None:
        raise UnknownPullRequest(f"No request of {tenant.slug} opened {repository}#{number}.")
    claimed = "merged" if merge_sha is not None else "closed"
    try:
        said = provisioner.read_pull_request(tenant, number)
    except ForgeUnavailable as error:
        return f"not acted on: the forge could not say whether #{number} was {claimed} ({error})"
    if said.state != claimed or (said.branch and said.branch != row.branch):
        logger.warning(
            "forge webhook for %s says #%s was %s; the forge says %s",
            tenant.slug,
            number,
            claimed,
            said.state,
        )
        return f"not acted on: the forge says #{number} is {said.state}, not {claimed}"
    # Who did it as the forge answers, never as the webhook's sender claims.
    if said.state == "merged":
        pull_request_merged(
            pull_request_id=row.pk, merged_by=said.merged_by, merge_sha=said.merge_sha
        )
        return f"merged: request #{row.request_id} goes on"
    pull_request_closed(pull_request_id=row.pk, closed_by=said.closed_by, reason="")
    return f"closed: request #{row.request_id} is back with its requester"


def pull_request_merged(*, pull_request_id: int, merged_by: str, merge_sha: str) -> Request:
    """The forge merged the request's pull request: recorded, and the request, if it waits
    for it, goes on (its run resumes where it waited). Said twice (webhook and polling), it
    is done once."""
    with transaction.atomic():
        row = PullRequest.objects.select_for_update().get(pk=pull_request_id)
        if row.state == PullRequestState.OPEN:
            row.state, row.merged_by, row.merge_sha = PullRequestState.MERGED, merged_by, merge_sha
            row.save(update_fields=["state", "merged_by", "merge_sha", "updated_at"])
        tenancy_request = Request.objects.get(pk=row.request_id)
        if tenancy_request.state != RequestState.AWAITING_MERGE:
            return tenancy_request  # told already, or still being opened: its worker sees it
        by = f" by {row.merged_by}" if row.merged_by else ""
        return resume_merged(
            request_id=row.request_id,
            message=f"Pull request #{row.number} was merged{by}: provisioning goes on.",
        )


def pull_request_closed(*, pull_request_id: int, closed_by: str, reason: str) -> Request:
    """The forge closed the request's pull request without merging: recorded with who did
    and why, the run ends, the names it held are free again and the request is back with
    its requester (state Returned). Said twice, it is done once."""
    with transaction.atomic():
        row = PullRequest.objects.select_for_update().get(pk=pull_request_id)
        if row.state == PullRequestState.OPEN:
            row.state, row.closed_by = PullRequestState.CLOSED, closed_by
            row.reason = reason or _closed_reason(row.number, closed_by)
            row.save(update_fields=["state", "closed_by", "reason", "updated_at"])
        tenancy_request = Request.objects.get(pk=row.request_id)
        if tenancy_request.state != RequestState.AWAITING_MERGE:
            return tenancy_request

        def side_effect(locked: Request) -> dict[str, Any]:
            return {"pull_request": row.url, "closed_by": row.closed_by, **release_claims(locked)}

        return return_unmerged(
            request_id=row.request_id, reason=row.reason, side_effect=side_effect
        )


def _closed_reason(number: int, closed_by: str) -> str:
    by = f" by {closed_by}" if closed_by else ""
    return (
        f"Pull request #{number} was closed without merging{by} on the forge: nothing was "
        "applied. Ask again if the change is still wanted."
    )
