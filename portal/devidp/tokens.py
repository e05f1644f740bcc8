"""Access tokens as the API wants them: RFC 9068 JWTs (`typ: at+jwt`) for the audience
DEVIDP_API_AUDIENCE (`berth-api`; `make run` sets Berth's OIDC_API_AUDIENCE to match),
signed with the provider's own key, so a developer can try Berth's API with a real access
token and see an ID token refused.

django-oidc-provider issues opaque access tokens; this endpoint hands out a signed JWT
whose `jti` is that opaque token instead, and the userinfo endpoint (which Berth's sign-in
calls) takes the JWT back, checks it and looks up the opaque token it wraps.
"""

from __future__ import annotations

import os
import time
from typing import Any

import jwt
from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt
from oidc_provider import views as provider_views
from oidc_provider.lib.endpoints.token import TokenEndpoint
from oidc_provider.lib.utils.common import get_issuer
from oidc_provider.lib.utils.token import get_client_alg_keys
from oidc_provider.models import Token

from portal.devidp.claims import subject

API_AUDIENCE = os.environ.get("DEVIDP_API_AUDIENCE", "berth-api")
TYPE = "at+jwt"


def signed_access_token(opaque: str, *, request: HttpRequest) -> str:
    token = Token.objects.select_related("user", "client").get(access_token=opaque)
    key = get_client_alg_keys(token.client)[0]
    claims: dict[str, Any] = {
        "iss": get_issuer(request=request),
        "sub": subject(token.user),
        "aud": API_AUDIENCE,
        "client_id": token.client.client_id,
        "scope": " ".join(token.scope),
        "iat": int(time.time()),
        "exp": int(token.expires_at.timestamp()),
        "jti": opaque,
    }
    return jwt.encode(
        claims, key["key"], algorithm=key["algorithm"], headers={"kid": key["kid"], "typ": TYPE}
    )


def opaque_token(value: str, *, request: HttpRequest) -> str | None:
    """The opaque token a JWT access token of ours wraps; None if it is not one."""
    try:
        header = jwt.get_unverified_header(value)
        token = Token.objects.select_related("client").get(
            access_token=jwt.decode(value, options={"verify_signature": False})["jti"]
        )
    except (jwt.InvalidTokenError, KeyError, Token.DoesNotExist):
        return None
    keys = {key.get("kid"): key for key in get_client_alg_keys(token.client)}
    key = keys.get(header.get("kid"))
    if key is None:
        return None
    try:
        claims = jwt.decode(
            value,
            key["key"].public_key(),
            algorithms=[key["algorithm"]],
            audience=API_AUDIENCE,
            issuer=get_issuer(request=request),
        )
    except jwt.InvalidTokenError:
        return None
    return claims["jti"]


class JwtAccessTokenEndpoint(TokenEndpoint):
    def create_response_dic(self) -> dict[str, Any]:
        answer = super().create_response_dic()
        if answer.get("access_token"):
            answer["access_token"] = signed_access_token(
                answer["access_token"], request=self.request
            )
        return answer


class TokenView(provider_views.TokenView):
    token_endpoint_class = JwtAccessTokenEndpoint


@csrf_exempt
def userinfo(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
    scheme, _, value = request.META.get("HTTP_AUTHORIZATION", "").partition(" ")
    if scheme.lower() == "bearer" and value.count(".") == 2:
        wrapped = opaque_token(value.strip(), request=request)
        request.META["HTTP_AUTHORIZATION"] = f"Bearer {wrapped or 'invalid'}"
    return provider_views.userinfo(request, *args, **kwargs)
