"""A Kubernetes API server stand-in for tests and the developer sandbox (see ``server``)."""

from .authn import ADMIN, ANONYMOUS, UserInfo
from .server import ANONYMOUS_IS_ADMIN, Fault, KubeSandbox
from .store import DEFAULT_NAMESPACES, Store

__all__ = [
    "ADMIN",
    "ANONYMOUS",
    "ANONYMOUS_IS_ADMIN",
    "DEFAULT_NAMESPACES",
    "Fault",
    "KubeSandbox",
    "Store",
    "UserInfo",
]
