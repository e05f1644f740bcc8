"""The sign-in page, the sign-in-failed page, and the OIDC views around mozilla-django-oidc's.

A failed sign-in (unknown or replayed state, a token that does not verify, a provider
error) always ends the same way: the reason is logged without tokens or secrets, the
session is flushed, and the browser lands on a page that says what happened and what to do.
"""

from __future__ import annotations

import logging
import re
from urllib.parse import urlencode

import requests
from django.conf import settings
from django.contrib import auth, messages
from django.core.exceptions import SuspiciousOperation
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render, resolve_url
from django.utils.http import url_has_allowed_host_and_scheme
from mozilla_django_oidc.views import (
    OIDCAuthenticationCallbackView,
    OIDCAuthenticationRequestView,
    OIDCLogoutView,
)

from portal.auth import discovery
from portal.auth.errors import REASONS, SignInRefused
from tenants.client_address import client_ip

logger = logging.getLogger(__name__)

PROVIDER_ERROR = re.compile(r"[a-z_]{1,40}")
SETTINGS_TO_SET = [
    ("OIDC_ISSUER", "the provider's issuer URL; its endpoints are discovered from it"),
    ("OIDC_CLIENT_ID", "Berth's client ID at the provider"),
    ("OIDC_CLIENT_SECRET", "Berth's client secret"),
    ("OIDC_GROUPS_CLAIM", "the claim that carries groups (default: groups)"),
    ("BERTH_PLATFORM_ADMIN_GROUPS", "comma-separated groups whose members are platform admins"),
]


def signin(request: HttpRequest) -> HttpResponse:
    next_url = _safe_next(request)
    if request.user.is_authenticated:
        return redirect(next_url or settings.LOGIN_REDIRECT_URL)
    start = resolve_url("oidc_authentication_init")
    if next_url:
        start = f"{start}?{urlencode({'next': next_url})}"
    return render(
        request,
        "auth/signin.html",
        {
            "configured": discovery.is_configured(),
            "provider_name": settings.OIDC_PROVIDER_NAME,
            "start_url": start,
            "settings_to_set": SETTINGS_TO_SET,
        },
    )


def signin_failed(request: HttpRequest) -> HttpResponse:
    code = request.GET.get("reason", "unknown")
    return render(
        request,
        "auth/signin_failed.html",
        {"reason": REASONS.get(code, REASONS["unknown"]), "code": code if code in REASONS else ""},
    )


def refuse(request: HttpRequest, refused: SignInRefused) -> HttpResponse:
    """Log why, end the session, and send the browser to the sign-in-failed page."""
    logger.warning(
        "sign-in refused reason=%s detail=%s ip=%s",
        refused.code,
        refused.detail,
        client_ip(request),
    )
    auth.logout(request)  # flushes the session: a failed sign-in leaves none behind
    failure = resolve_url(settings.LOGIN_REDIRECT_URL_FAILURE)
    return HttpResponseRedirect(f"{failure}?{urlencode({'reason': refused.code})}")


class AuthenticateView(OIDCAuthenticationRequestView):
    """Sends the browser to the provider (authorization code flow with PKCE, state, nonce).
    Someone already signed in is sent on instead: a cross-site link to this page must not
    start a flow that could end their session."""

    def get(self, request: HttpRequest) -> HttpResponse:
        if request.user.is_authenticated:
            return redirect(_safe_next(request) or settings.LOGIN_REDIRECT_URL)
        try:
            self.OIDC_OP_AUTH_ENDPOINT = discovery.provider().authorization_endpoint
        except SignInRefused as refused:
            return refuse(request, refused)
        self.OIDC_RP_CLIENT_ID = settings.OIDC_RP_CLIENT_ID
        return super().get(request)


class CallbackView(OIDCAuthenticationCallbackView):
    """Where the provider sends the browser back; every failure gets a reason and a page."""

    def get(self, request: HttpRequest) -> HttpResponse:
        if request.user.is_authenticated and not _started_here(request):
            # Not the answer to a sign-in this browser started (a stray or cross-site link):
            # it must not end the session that is there.
            logger.warning(
                "sign-in callback without a pending sign-in, ignored ip=%s", client_ip(request)
            )
            return redirect(settings.LOGIN_REDIRECT_URL)
        try:
            self._check_response(request)
            return super().get(request)
        except SignInRefused as refused:
            return refuse(request, refused)
        except SuspiciousOperation as exc:  # mozilla-django-oidc's own checks
            return refuse(request, SignInRefused("token", f"{type(exc).__name__}: {exc}"))
        except requests.RequestException as exc:
            return refuse(request, SignInRefused("unreachable", type(exc).__name__))
        except Exception as exc:  # still a clear page and no half-made session, never a 500
            logger.exception("unexpected error during sign-in")
            return refuse(request, SignInRefused("unknown", type(exc).__name__))

    @staticmethod
    def _check_response(request: HttpRequest) -> None:
        error = request.GET.get("error")
        if error:
            shown = error if PROVIDER_ERROR.fullmatch(error) else "(unreadable)"
            raise SignInRefused("provider", f"the provider answered error={shown}")
        state = request.GET.get("state")
        if not state:
            raise SignInRefused("state", "the callback carries no state")
        if state not in request.session.get("oidc_states", {}):
            raise SignInRefused("state", "the state is unknown to this session or already used")
        if not request.GET.get("code"):
            raise SignInRefused("provider", "the callback carries no code")

    def login_failure(self) -> HttpResponse:
        # Reached when authentication produced no user without saying why.
        code = "unknown" if discovery.is_configured() else "not_configured"
        return refuse(self.request, SignInRefused(code, "authentication returned no user"))


class LogoutView(OIDCLogoutView):
    """Sign-out by POST only (the form in every page's header): a GET, which any other site
    can make the browser send, ends nobody's session."""

    http_method_names = ["post"]

    def post(self, request: HttpRequest) -> HttpResponse:
        was_signed_in = request.user.is_authenticated
        response = super().post(request)
        if was_signed_in:
            # Kept in a cookie (the session is gone), shown by the sign-in page it ends on.
            messages.success(request, "You are signed out of Berth. Sign in again below.")
        return response


def _started_here(request: HttpRequest) -> bool:
    return request.GET.get("state", "") in request.session.get("oidc_states", {})


def _safe_next(request: HttpRequest) -> str:
    next_url = request.GET.get("next", "")
    allowed = url_has_allowed_host_and_scheme(
        next_url, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )
    return next_url if next_url and allowed else ""
