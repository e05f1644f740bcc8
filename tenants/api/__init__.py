"""Berth's REST API (/api/v1/): thin views over tenants.services and tenants.selectors.

Layout: authentication (API tokens, OIDC access tokens), permissions (token scopes,
platform admins), throttling, exceptions (RFC 9457 problem details), idempotency
(`Idempotency-Key`), pagination, serializers, views, urls, schema (OpenAPI extensions).
"""
