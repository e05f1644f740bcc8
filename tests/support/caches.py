"""The cache a test starts from: empty, and emptied without touching other test processes.

Django's RedisCache.clear() flushes the whole Redis database, which is every xdist
worker's cache at once (each has its own key prefix, tests/settings.py): one worker's
clear took the what-if another had just kept between its try and its save.
"""

from __future__ import annotations

from django.conf import settings
from django.core.cache import cache


def clear_own_cache() -> None:
    """Empty this process's cache: on Redis only the keys under its prefix."""
    prefix = settings.CACHES["default"].get("KEY_PREFIX")
    if not prefix or "redis" not in settings.CACHES["default"]["BACKEND"].lower():
        cache.clear()
        return
    client = cache._cache.get_client(write=True)
    keys = list(client.scan_iter(match=f"{prefix}:*", count=1000))
    if keys:
        client.delete(*keys)
