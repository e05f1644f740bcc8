"""A Kubernetes API server stand-in for tests and the developer sandbox (see ``server``)."""

from .server import Fault, KubeSandbox
from .store import DEFAULT_NAMESPACES, Store

__all__ = ["DEFAULT_NAMESPACES", "Fault", "KubeSandbox", "Store"]
