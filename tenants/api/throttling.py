"""Rate limits: per API token, per user for sessions and access tokens, per address for
anonymous callers. The counters live in the cache (Redis when REDIS_URL is set, so all
web processes count together). The rate comes from BERTH_API_RATE (e.g. "600/min");
past it, 429 with Retry-After.

When the cache cannot be reached the limiter fails open: the request goes through, a
warning is logged (at most once a minute per process) and `throttle_cache_failed` is sent
(counted as berth_throttle_cache_failures_total). A Redis outage must not take the whole
API down with it."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from django.conf import settings
from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle

from tenants.models import ApiToken
from tenants.signals import throttle_cache_failed

if TYPE_CHECKING:
    from rest_framework.views import APIView


logger = logging.getLogger(__name__)
WARN_EVERY_SECONDS = 60
_last_warning = [0.0]


class ApiRateThrottle(SimpleRateThrottle):
    scope = "api"

    def allow_request(self, request: Request, view: APIView) -> bool:
        try:
            return super().allow_request(request, view)
        except Exception as error:  # noqa: BLE001 - any cache failure: fail open
            throttle_cache_failed.send(sender=type(self))
            now = time.monotonic()
            if now - _last_warning[0] > WARN_EVERY_SECONDS:
                _last_warning[0] = now
                logger.warning("rate limiting is off: its cache is unreachable (%s)",
                               type(error).__name__)
            return True

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
