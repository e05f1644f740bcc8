"""The forge's webhook: GitHub `pull_request` events (signed with the tenant's forge webhook
secret), Gitea's and Forgejo's (signed too, the bare hex digest in `X-Gitea-Signature`) and
GitLab `Merge Request Hook` events (carrying the secret) for the pull requests Berth opened in
merge-request mode."""

from __future__ import annotations

import logging

from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from tenants import services
from tenants.services.pull_requests import SIGNATURE_HEADER

logger = logging.getLogger(__name__)

# A pull_request event is a few tens of kilobytes; nothing a forge sends is near this.
MAX_BODY = 5 * 1024 * 1024


@csrf_exempt  # the forge signs its events instead: no session, no cookie
@require_POST
def forge_webhook(request: HttpRequest, slug: str) -> HttpResponse:
    """204 when the event was read (acted on or ignored), 403 when it is not signed with (or
    does not carry) the tenant's secret, 404 when it names a pull request Berth did not
    open."""
    if int(request.headers.get("Content-Length") or 0) > MAX_BODY:
        return HttpResponse(status=413)
    try:
        if "X-Gitlab-Event" in request.headers:
            done = services.receive_gitlab_event(
                tenant_slug=slug,
                event=request.headers["X-Gitlab-Event"],
                token=request.headers.get("X-Gitlab-Token", ""),
                body=request.body,
            )
        elif "X-Gitea-Event" in request.headers:  # Forgejo sends it too, beside its own
            # Gitea's payload is GitHub's shape; its signature the same HMAC, unprefixed.
            done = services.receive_forge_event(
                tenant_slug=slug,
                event=request.headers["X-Gitea-Event"],
                signature="sha256=" + request.headers.get("X-Gitea-Signature", ""),
                body=request.body,
            )
        else:
            done = services.receive_forge_event(
                tenant_slug=slug,
                event=request.headers.get("X-GitHub-Event", ""),
                signature=request.headers.get(SIGNATURE_HEADER, ""),
                body=request.body,
            )
    except services.BadSignature:
        logger.warning("forge webhook for %s refused: bad signature", slug)
        return HttpResponse("Signature does not match.\n", status=403, content_type="text/plain")
    except services.UnknownPullRequest as unknown:
        return HttpResponse(f"{unknown}\n", status=404, content_type="text/plain")
    logger.info("forge webhook for %s: %s", slug, done)
    return HttpResponse(status=204)
