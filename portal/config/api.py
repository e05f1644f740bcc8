"""REST API: /api/v1/ (tenants.api), schema at /api/schema/, docs at /api/docs/.

Callers are personal API tokens (`Authorization: Bearer berth_…`), access tokens (JWT)
from the OIDC provider for machine clients, or the browser's session (with CSRF). Errors
are RFC 9457 problem details. See docs/api.md.
"""

from __future__ import annotations

from typing import Any


def rest_framework_settings(*, num_proxies: int) -> dict[str, Any]:
    """Django REST framework's REST_FRAMEWORK; `num_proxies` is BERTH_NUM_PROXIES."""
    return {
        "DEFAULT_AUTHENTICATION_CLASSES": [
            # First, so that a request without credentials gets 401 with WWW-Authenticate.
            "tenants.api.authentication.ApiTokenAuthentication",
            "portal.auth.api.OIDCAccessTokenAuthentication",
            "rest_framework.authentication.SessionAuthentication",
        ],
        "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
        "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
        "DEFAULT_PARSER_CLASSES": ["tenants.api.parsers.JSONParser"],
        "DEFAULT_PAGINATION_CLASS": "tenants.api.pagination.PageNumberPagination",
        "DEFAULT_FILTER_BACKENDS": [
            "tenants.api.filters.StrictFilterBackend",
            "tenants.api.filters.StrictOrderingFilter",
        ],
        "DEFAULT_THROTTLE_CLASSES": ["tenants.api.throttling.ApiRateThrottle"],
        "EXCEPTION_HANDLER": "tenants.api.exceptions.problem_handler",
        "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
        # Client addresses for anonymous throttling: how many proxies put X-Forwarded-For.
        "NUM_PROXIES": num_proxies,
    }


SPECTACULAR_SETTINGS: dict[str, Any] = {
    "TITLE": "Berth API",
    "DESCRIPTION": "Self-service tenancy for shared Kubernetes clusters: everything a person "
    "can do in Berth's pages, over REST, with the same validation, policies and tenant "
    "scoping. Errors are RFC 9457 problem details (application/problem+json).",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SCHEMA_PATH_PREFIX": r"/api/v1",
    "COMPONENT_SPLIT_REQUEST": True,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "ENUM_NAME_OVERRIDES": {
        "RequestStateEnum": "tenants.choices.RequestState",
        "NamespaceStateEnum": "tenants.choices.NamespaceState",
        "RunStateEnum": "tenants.choices.RunState",
        "TokenScopeEnum": "tenants.models.tokens.TokenScope",
        "CampaignStateEnum": "tenants.choices.CampaignState",
        "TargetStateEnum": "tenants.choices.TargetState",
        "TruthStateEnum": "tenants.api.serializers.truth.STATES",
        "DeployTokenStateEnum": "tenants.api.serializers.deploy_tokens.STATES",
    },
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "tenants.api.schema.add_problem_responses",
        "tenants.api.schema.add_links",
        "tenants.api.schema.strict_query_parameters",
    ],
}


def cache_settings(*, location: str) -> dict[str, Any]:
    """CACHES, which hold the API's throttling counters: Redis at `location` so that every
    web process counts together; with no location, memory, per process (development, tests).
    """
    if location:
        return {
            "default": {
                "BACKEND": "django.core.cache.backends.redis.RedisCache",
                "LOCATION": location,
                "KEY_PREFIX": "berth",
            }
        }
    return {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
