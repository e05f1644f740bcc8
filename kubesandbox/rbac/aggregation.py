"""ClusterRole aggregation, as upstream's clusterrole-aggregation controller does it: a
ClusterRole with an ``aggregationRule`` holds the rules of every ClusterRole its selectors
match, kept up to date on every ClusterRole write."""

from __future__ import annotations

from ..resources import RBAC, ResourceType
from ..selectors import matches_label_selector
from ..storeview import ControlledStore


def aggregation_controller(
    store: ControlledStore, rt: ResourceType, obj: dict, deleted: bool
) -> None:
    if (rt.group, rt.plural) != (RBAC, "clusterroles"):
        return
    roles = store.stored(RBAC, "clusterroles")
    for role in list(roles):
        selectors = (role.get("aggregationRule") or {}).get("clusterRoleSelectors")
        if not selectors:
            continue
        rules: list[dict] = []
        for other in sorted(roles, key=lambda r: r["metadata"]["name"]):
            if other is role:
                continue
            labels = other["metadata"].get("labels") or {}
            if any(matches_label_selector(s, labels) for s in selectors):
                rules += [r for r in other.get("rules") or [] if r not in rules]
        if rules != (role.get("rules") or []):
            updated = {**role, "rules": rules}
            updated["metadata"] = dict(role["metadata"])
            store.write_internal(rt, updated)
