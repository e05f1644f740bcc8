"""Rate limits: per API token, per user for sessions and access tokens, per address for
anonymous callers. The counters live in the cache (Redis when REDIS_URL is set, so all
web processes count together). The rate comes from BERTH_API_RATE (e.g. "600/min");
past it, 429 with Retry-After."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings
from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle

from tenants.models import ApiToken

if TYPE_CHECKING:
    from rest_framework.views import APIView


class ApiRateThrottle(SimpleRateThrottle):
    scope = "api"

    def get_rate(self) -> str:
        return settings.BERTH_API_RATE

    def get_cache_key(self, request: Request, view: APIView) -> str:
        if isinstance(request.auth, ApiToken):
            ident = f"token:{request.auth.pk}"
        elif request.user and request.user.is_authenticated:
            ident = f"user:{request.user.pk}"
        else:
            ident = f"ip:{self.get_ident(request)}"
        return f"throttle:api:{ident}"
