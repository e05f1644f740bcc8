"""The state file: a developer sandbox's objects survive restarts."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from ..objects import object_key
from .state import StoreState


class Persistence:
    """Mixed into ``Store``."""

    def _persist(self: StoreState) -> None:
        if not self.state_file:
            return
        state = {
            "resourceVersion": self._resource_version,
            "terminating": self._terminating,
            "objects": list(self._objects.values()),
        }
        # Write-then-rename so a crash never leaves a half-written state file.
        partial = self.state_file.with_name(self.state_file.name + ".tmp")
        partial.write_text(json.dumps(state, sort_keys=True))
        os.replace(partial, self.state_file)

    def _load(self: StoreState, state_file: Path) -> None:
        state = json.loads(state_file.read_text())
        self._resource_version = int(state["resourceVersion"])
        self._terminating = {k: float(v) for k, v in state.get("terminating", {}).items()}
        # CRDs first: their types must exist before their objects can be read back.
        objects = sorted(state["objects"], key=lambda o: o["kind"] != "CustomResourceDefinition")
        for obj in objects:
            try:
                rt = self.registry.lookup(obj["kind"], obj["apiVersion"])
            except KeyError:  # a kind this version no longer serves (or its CRD is gone)
                meta = obj.get("metadata") or {}
                sys.stderr.write(
                    f"kubesandbox: dropping {obj.get('apiVersion')} "
                    f"{obj.get('kind')} {meta.get('namespace', '')}/"
                    f"{meta.get('name')} from the state file: not served\n"
                )
                continue
            meta = obj["metadata"]
            self._objects[object_key(rt, meta.get("namespace"), meta["name"])] = obj
            for controller in self.controllers:
                controller(self, rt, obj, False)
