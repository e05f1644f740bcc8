"""Rate limits: per API token, per user for sessions and access tokens, per address for
anonymous callers. The counters live in the cache (Redis when REDIS_URL is set, so all
web processes count together). The rate comes from BERTH_API_RATE (e.g. "600/min");
past it, 429 with Retry-After (until the window ends).

One counter per caller and window, incremented in the cache; a window is the rate's period
from the caller's first request in it. A request costs the same whatever the rate. DRF's
own throttle keeps the time of every request of the period in one cache entry, read and
written whole on each request, so its cost grew with the rate (at 600/min, up to 600
timestamps each way).

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

from tenants.client_address import client_ip
from tenants.models import ApiToken
from tenants.signals import throttle_cache_failed

if TYPE_CHECKING:
    from rest_framework.views import APIView


logger = logging.getLogger(__name__)
WARN_EVERY_SECONDS = 60
_last_warning = [0.0]


class ApiRateThrottle(SimpleRateThrottle):
    scope = "api"

    def get_rate(self) -> str:
        return settings.BERTH_API_RATE

    def allow_request(self, request: Request, view: APIView) -> bool:
        try:
            return self._allow(request, view)
        except Exception as error:
            throttle_cache_failed.send(sender=type(self))
            now = time.monotonic()
            if now - _last_warning[0] > WARN_EVERY_SECONDS:
                _last_warning[0] = now
                logger.warning(
                    "rate limiting is off: its cache is unreachable (%s)", type(error).__name__
                )
            return True

    def _allow(self, request: Request, view: APIView) -> bool:
        if self.rate is None:
            return True
        self.key = self.get_cache_key(request, view)
        try:
            count = self.cache.incr(self.key)
        except ValueError:  # the caller's first request of a window: the window starts
            if not self.cache.add(self.key, 1, self.duration):
                count = self.cache.incr(self.key)  # another process started it just now
            else:
                self.cache.set(f"{self.key}:start", time.time(), self.duration)
                count = 1
        return count <= self.num_requests

    def wait(self) -> float:
        """Seconds until the caller's window ends (Retry-After)."""
        started = self.cache.get(f"{self.key}:start")
        if started is None:
            return float(self.duration)
        return max(1.0, started + self.duration - time.time())

    def get_cache_key(self, request: Request, view: APIView) -> str:
        if isinstance(request.auth, ApiToken):
            ident = f"token:{request.auth.pk}"
        elif request.user and request.user.is_authenticated:
            ident = f"user:{request.user.pk}"
        else:
            ident = f"ip:{client_ip(request)}"
        return f"throttle:api:{ident}"
