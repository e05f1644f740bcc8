"""Namespace termination: a deleted namespace is Terminating (no new content) for
``termination_seconds``, then disappears with everything in it, as the namespace controller
would do it."""

from __future__ import annotations

import copy
import time

from ..objects import now, object_key
from ..resources import NAMESPACES
from .state import StoreState


class NamespaceLifecycle:
    """Mixed into ``Store``."""

    def _terminate_namespace(self: StoreState, namespace: dict) -> dict:
        name = namespace["metadata"]["name"]
        if name not in self._terminating:
            namespace["metadata"]["deletionTimestamp"] = now()
            namespace["status"] = {"phase": "Terminating"}
            self._terminating[name] = time.time() + self.termination_seconds
            self._commit(NAMESPACES, namespace, self._objects[object_key(NAMESPACES, None, name)])
        response = copy.deepcopy(self._objects[object_key(NAMESPACES, None, name)])
        self._reap()
        return response

    def _reap(self: StoreState) -> None:
        """Finish namespace terminations that are due (lazily, on the next access)."""
        due = [name for name, at in self._terminating.items() if at <= time.time()]
        for name in due:
            del self._terminating[name]
            for key in [k for k in self._objects if k[2] == name]:
                self._remove(None, key)
            self._remove(NAMESPACES, object_key(NAMESPACES, None, name))
        if due:
            self._persist()
