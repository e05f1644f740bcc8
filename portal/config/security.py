"""Content Security Policy (django-csp, portal.security).

Berth's own scripts and styles only, no inline code and nothing from elsewhere; forms post
to Berth (and, added per answer, to the identity provider sign-out redirects to).
"""

from __future__ import annotations

from typing import Any

CONTENT_SECURITY_POLICY: dict[str, Any] = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "frame-ancestors": ["'none'"],
        "form-action": ["'self'"],
    },
}
