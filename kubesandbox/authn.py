"""Authentication: bearer tokens to users, as kube-apiserver's token authenticators do.

* the admin token (``KubeSandbox(token=...)``, or one generated at start and written to the
  kubeconfig): user ``kubesandbox-admin`` in ``system:masters``;
* static tokens, the format of kube-apiserver's ``--token-auth-file``:
  ``token,user,uid,"group1,group2"`` per line;
* ServiceAccount tokens minted by the TokenRequest API
  (``POST /api/v1/namespaces/<ns>/serviceaccounts/<name>/token``): user
  ``system:serviceaccount:<ns>:<name>`` in ``system:serviceaccounts`` and
  ``system:serviceaccounts:<ns>``; they stop working when they expire or the ServiceAccount
  is deleted (or re-created with another uid).

Every authenticated user is also in ``system:authenticated``. A request without credentials
is ``system:anonymous`` in ``system:unauthenticated``, unless the sandbox was told to treat
it as another user (``anonymous_user``); a request with a token nobody knows is 401.
"""

from __future__ import annotations

import csv
import io
import os
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

AUTHENTICATED = "system:authenticated"
UNAUTHENTICATED = "system:unauthenticated"
MASTERS = "system:masters"
SA_PREFIX = "system:serviceaccount:"


@dataclass(frozen=True)
class UserInfo:
    username: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: tuple[tuple[str, tuple[str, ...]], ...] = field(default=())

    def as_dict(self) -> dict:
        info: dict = {"username": self.username, "groups": list(self.groups)}
        if self.uid:
            info["uid"] = self.uid
        if self.extra:
            info["extra"] = {key: list(values) for key, values in self.extra}
        return info

    @property
    def is_admin(self) -> bool:
        return MASTERS in self.groups


ADMIN = UserInfo("kubesandbox-admin", groups=(MASTERS, AUTHENTICATED))
ANONYMOUS = UserInfo("system:anonymous", groups=(UNAUTHENTICATED,))


def service_account_user(namespace: str, name: str, uid: str = "") -> UserInfo:
    return UserInfo(
        f"{SA_PREFIX}{namespace}:{name}",
        uid,
        ("system:serviceaccounts", f"system:serviceaccounts:{namespace}", AUTHENTICATED),
    )


def with_authenticated(user: UserInfo) -> UserInfo:
    """Authenticated users are in system:authenticated, whatever else they are in."""
    if user.username == ANONYMOUS.username or AUTHENTICATED in user.groups:
        return user
    return UserInfo(user.username, user.uid, (*user.groups, AUTHENTICATED), user.extra)


def parse_token_file(text: str) -> dict[str, UserInfo]:
    """``token,user,uid[,"group1,group2"]`` lines, as kube-apiserver's --token-auth-file."""
    tokens = {}
    for row in csv.reader(io.StringIO(text)):
        if not row or row[0].startswith("#"):
            continue
        if len(row) < 3:
            raise ValueError(f"token file line needs at least token,user,uid: {row!r}")
        groups = tuple(g.strip() for g in row[3].split(",") if g.strip()) if len(row) > 3 else ()
        tokens[row[0].strip()] = with_authenticated(
            UserInfo(row[1].strip(), row[2].strip(), groups)
        )
    return tokens


@dataclass
class _Minted:
    namespace: str
    name: str
    uid: str
    expires: float
    audiences: tuple[str, ...]


class Authenticator:
    def __init__(
        self,
        *,
        admin_token: str,
        static_tokens: dict[str, UserInfo] | None = None,
        anonymous: UserInfo = ANONYMOUS,
        service_account_uid: Callable[[str, str], str | None] = lambda ns, name: None,
    ) -> None:
        self.admin_token = admin_token
        self.static_tokens = dict(static_tokens or {})
        self.anonymous = anonymous
        self.service_account_uid = service_account_uid
        self._minted: dict[str, _Minted] = {}
        self._lock = threading.Lock()

    @classmethod
    def token_file(cls, path: str | os.PathLike[str]) -> dict[str, UserInfo]:
        return parse_token_file(Path(path).read_text())

    def authenticate(self, authorization: str | None) -> UserInfo | None:
        """The user a request is from; None when its credentials are wrong (401)."""
        if not authorization:
            return self.anonymous
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        return self.user_for_token(token.strip())

    def user_for_token(self, token: str) -> UserInfo | None:
        if secrets.compare_digest(token, self.admin_token):
            return ADMIN
        if token in self.static_tokens:
            return self.static_tokens[token]
        with self._lock:
            minted = self._minted.get(token)
        if minted is None or minted.expires < time.time():
            return None
        if self.service_account_uid(minted.namespace, minted.name) != minted.uid:
            return None  # the ServiceAccount was deleted (or replaced) since
        return service_account_user(minted.namespace, minted.name, minted.uid)

    def mint(
        self,
        namespace: str,
        name: str,
        uid: str,
        *,
        expiration_seconds: int = 3600,
        audiences: tuple[str, ...] = (),
    ) -> tuple[str, str]:
        """A new ServiceAccount token and its expirationTimestamp."""
        token = "kubesandbox-sa." + secrets.token_urlsafe(32)
        expires = time.time() + expiration_seconds
        with self._lock:
            self._minted[token] = _Minted(namespace, name, uid, expires, audiences)
        stamp = datetime.fromtimestamp(expires, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return token, stamp
