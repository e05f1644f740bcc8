"""The object store: apiserver write semantics over a dict, behind one lock.

``objectstore.Store`` is the store's public face (reads, create, replace, patch, delete,
upsert, reset); its parts are mixed into it and name it only through the ``state``
Protocol: ``commits`` (the steps every write ends in), ``apply`` (server-side apply),
``namespaces`` (termination), ``persistence`` (the state file); ``index`` keeps the
objects reachable by type and namespace.
"""

from ..objects import APPLY_PATCH, DEFAULT_NAMESPACES, PATCH_TYPES, WriteContext
from .objectstore import Store

__all__ = ["APPLY_PATCH", "DEFAULT_NAMESPACES", "PATCH_TYPES", "Store", "WriteContext"]
