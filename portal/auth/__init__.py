"""Signing in: OpenID Connect (mozilla-django-oidc) for people, a password for break-glass only.

- `discovery`  where the provider's endpoints are (its discovery document, fetched once)
- `backends`   the OIDC backend (tokens checked strictly) and the superuser-only password one
- `identity`   claims → the Berth user (matched by `sub`), then memberships from groups
- `logout`     the provider's end-session URL for RP-initiated logout
- `views`      the sign-in page, the sign-in-failed page and the OIDC views around them
- `errors`     why a sign-in was refused (a short code, and what it means to a person)
"""
