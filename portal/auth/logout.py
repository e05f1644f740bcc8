"""Where "Sign out" sends the browser (mozilla-django-oidc's OIDC_OP_LOGOUT_URL_METHOD).

For a session that signed in at the provider: its end-session endpoint, with the ID token
as `id_token_hint` and Berth's sign-in page as `post_logout_redirect_uri` (RP-initiated
logout), so signing out of Berth also ends the provider's session. For a break-glass
(password) session, or a provider without an end-session endpoint: Berth's sign-in page.
Berth's own session is flushed by the logout view either way.
"""

from __future__ import annotations

import logging
from urllib.parse import urlencode

from django.conf import settings
from django.http import HttpRequest
from django.shortcuts import resolve_url

from portal.auth import discovery
from portal.auth.errors import SignInRefused

logger = logging.getLogger(__name__)


def provider_logout_url(request: HttpRequest) -> str:
    after_logout = resolve_url(settings.LOGOUT_REDIRECT_URL)
    id_token = request.session.get("oidc_id_token")
    if not id_token:
        return after_logout
    try:
        endpoint = discovery.provider().end_session_endpoint
    except SignInRefused as refused:
        logger.warning("signing out locally only: %s", refused)
        return after_logout
    if not endpoint:
        return after_logout
    query = urlencode(
        {
            "id_token_hint": id_token,
            "post_logout_redirect_uri": request.build_absolute_uri(after_logout),
            "client_id": settings.OIDC_RP_CLIENT_ID,
        }
    )
    return f"{endpoint}{'&' if '?' in endpoint else '?'}{query}"
