"""Whose address a request came from: the one place audit events, sign-ins and the API's
throttling read it (docs/operations.md, BERTH_NUM_PROXIES)."""

from __future__ import annotations

import ipaddress
from typing import Any

from django.conf import settings


def client_ip(request: Any) -> str | None:
    """REMOTE_ADDR; behind BERTH_NUM_PROXIES trusted proxies (the chart's Ingress), the
    address the outermost of them saw: that many entries of X-Forwarded-For from its right,
    as Django REST framework's throttling counts them. An entry that is not an address (a
    forged header) falls back to REMOTE_ADDR."""
    if request is None:
        return None
    remote = request.META.get("REMOTE_ADDR")
    proxies = int(settings.REST_FRAMEWORK.get("NUM_PROXIES") or 0)
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    if proxies <= 0 or not forwarded:
        return remote
    hops = [hop.strip() for hop in forwarded.split(",")]
    candidate = hops[-min(proxies, len(hops))]
    try:
        return str(ipaddress.ip_address(candidate))
    except ValueError:
        return remote
