"""The test provider's keys and the tokens it signs: its JWKS entry, and for a redeemed code
an ID token and an access token (in the form the test asked for), spoilt by the one defect a
negative test asked for (DEFECTS)."""

from __future__ import annotations

import base64
import secrets
import time
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa


def new_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _b64url_uint(number: int) -> str:
    raw = number.to_bytes((number.bit_length() + 7) // 8, "big")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def public_jwk(key: rsa.RSAPrivateKey, kid: str) -> dict[str, str]:
    """The JWKS entry of `key`'s public half, under `kid`."""
    numbers = key.public_key().public_numbers()
    return {
        "kty": "RSA",
        "use": "sig",
        "alg": "RS256",
        "kid": kid,
        "n": _b64url_uint(numbers.n),
        "e": _b64url_uint(numbers.e),
    }


def minted(
    grant: dict[str, Any],
    *,
    issuer: str,
    client_id: str,
    key: rsa.RSAPrivateKey,
    impostor_key: rsa.RSAPrivateKey,
    kid: str,
) -> tuple[str, str, dict[str, Any]]:
    """(the ID token, the access token, the claims userinfo answers for that access token)
    for a redeemed code's `grant` (see server.Handler.authorize)."""
    claims, defect = dict(grant["claims"]), grant["defect"]
    if defect == "no_sub":
        claims.pop("sub", None)
    now = int(time.time())
    id_token = {
        **claims,
        "iss": issuer,
        "aud": client_id,
        "iat": now,
        "exp": now + 300,
        "nonce": grant["nonce"],
    }
    access = {
        "iss": issuer,
        "sub": claims.get("sub"),
        "aud": grant["audience"],
        "client_id": client_id,
        "scope": "openid",
        "iat": now,
        "exp": now + 300,
        "jti": secrets.token_hex(12),
        **{name: claims[name] for name in ("groups",) if name in claims},
    }
    if defect == "tampered_signature":
        key = impostor_key
    elif defect == "wrong_audience":
        id_token["aud"], access["aud"] = "another-client", "another-api"
    elif defect == "expired":
        id_token["iat"], id_token["exp"] = now - 1200, now - 600
        access["iat"], access["exp"] = now - 1200, now - 600
    elif defect == "wrong_issuer":
        id_token["iss"] = access["iss"] = "https://impostor.example.com"
    elif defect == "wrong_nonce":
        id_token["nonce"] = "not-this-sign-in"
    form = grant["access_token"]
    if form == "opaque":
        access_token = secrets.token_urlsafe(24)
    else:
        typ = "at+jwt" if form == "at+jwt" else "JWT"
        access_token = jwt.encode(access, key, algorithm="RS256", headers={"kid": kid, "typ": typ})
    encoded = jwt.encode(id_token, key, algorithm="RS256", headers={"kid": kid})
    return encoded, access_token, claims
