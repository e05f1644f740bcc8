"""The authorizer over a store's Roles, ClusterRoles and their bindings, and escalation
prevention: the check a write of a role or binding passes before it is stored."""

from __future__ import annotations

from ..authn import UserInfo
from ..errors import ApiError
from ..resources import RBAC, ResourceType
from ..storeview import ControlledStore
from .rules import (
    Attributes,
    break_down,
    covers,
    describe_user,
    go_rule,
    rule_allows,
    subject_matches,
)


class Authorizer:
    """Reads the RBAC objects of a store (call with the store's lock held or not: it locks)."""

    def __init__(self, store: ControlledStore) -> None:
        self.store = store

    def _role_rules(self, ref: dict, namespace: str) -> list[dict] | None:
        if ref.get("kind") == "ClusterRole":
            role = self.store.stored_object(RBAC, "clusterroles", "", ref.get("name") or "")
        else:
            role = self.store.stored_object(RBAC, "roles", namespace, ref.get("name") or "")
        return None if role is None else role.get("rules") or []

    def bindings_for(self, user: UserInfo, namespace: str) -> list[tuple[dict, list[dict]]]:
        """(binding, rules of its role) for each binding naming this user."""
        found = []
        with self.store.lock:
            bindings = self.store.stored(RBAC, "clusterrolebindings")
            if namespace:
                bindings += self.store.stored(RBAC, "rolebindings", namespace)
            for binding in bindings:
                binding_ns = binding["metadata"].get("namespace", "")
                if not any(
                    subject_matches(s, user, binding_ns) for s in binding.get("subjects") or []
                ):
                    continue
                rules = self._role_rules(binding.get("roleRef") or {}, binding_ns)
                if rules is not None:
                    found.append((binding, rules))
        return found

    def rules_for(self, user: UserInfo, namespace: str) -> list[dict]:
        if user.is_admin:
            return [
                {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                {"nonResourceURLs": ["*"], "verbs": ["*"]},
            ]
        return [rule for _, rules in self.bindings_for(user, namespace) for rule in rules]

    def authorize(self, user: UserInfo, attrs: Attributes) -> tuple[bool, str]:
        if user.is_admin:
            return True, ""
        for binding, rules in self.bindings_for(user, attrs.namespace):
            if any(rule_allows(rule, attrs) for rule in rules):
                kind = (
                    "RoleBinding" if binding["metadata"].get("namespace") else "ClusterRoleBinding"
                )
                ref = binding.get("roleRef") or {}
                where = binding["metadata"]["name"]
                if kind == "RoleBinding":
                    where = f"{binding['metadata']['namespace']}/{where}"
                return True, (
                    f'RBAC: allowed by {kind} "{where}" of {ref.get("kind")} '
                    f'"{ref.get("name")}" to User "{user.username}"'
                )
        return False, ""

    # -- escalation prevention -----------------------------------------------------------

    def uncovered(self, user: UserInfo, namespace: str, rules: list[dict]) -> list[dict]:
        """The requested rules (broken down) that the user's own rules do not cover."""
        owned = self.rules_for(user, namespace)
        missing = []
        for rule in rules:
            for piece in break_down(rule):
                if not any(covers(own, piece) for own in owned):
                    missing.append(piece)
        return missing

    def check_role_write(self, user: UserInfo, rt: ResourceType, obj: dict) -> None:
        namespace = obj["metadata"].get("namespace", "")
        allowed, _ = self.authorize(
            user,
            Attributes(
                "escalate",
                api_group=RBAC,
                resource=rt.plural,
                namespace=namespace,
                name=obj["metadata"].get("name", ""),
            ),
        )
        if allowed:
            return
        missing = self.uncovered(user, namespace, obj.get("rules") or [])
        if missing:
            raise _escalation(rt, obj, user, missing)

    def check_binding_write(self, user: UserInfo, rt: ResourceType, obj: dict) -> None:
        namespace = obj["metadata"].get("namespace", "")
        ref = obj.get("roleRef") or {}
        role_resource = "clusterroles" if ref.get("kind") == "ClusterRole" else "roles"
        allowed, _ = self.authorize(
            user,
            Attributes(
                "bind",
                api_group=RBAC,
                resource=role_resource,
                namespace=namespace,
                name=ref.get("name", ""),
            ),
        )
        if allowed:
            return
        with self.store.lock:
            rules = self._role_rules(ref, namespace)
        if rules is None:
            raise ApiError(
                403,
                f'{rt.group_resource} "{obj["metadata"].get("name")}" is '
                f'forbidden: {role_resource}.{RBAC} "{ref.get("name")}" not found',
                details={"name": obj["metadata"].get("name"), "group": RBAC, "kind": rt.plural},
            )
        missing = self.uncovered(user, namespace, rules)
        if missing:
            raise _escalation(rt, obj, user, missing)


def _escalation(rt: ResourceType, obj: dict, user: UserInfo, missing: list[dict]) -> ApiError:
    name = obj["metadata"].get("name", "")
    rules = "\n".join(go_rule(rule) for rule in missing)
    return ApiError(
        403,
        f'{rt.group_resource} "{name}" is forbidden: {describe_user(user)} is attempting to '
        f"grant RBAC permissions not currently held:\n{rules}",
        details={"name": name, "group": RBAC, "kind": rt.plural},
    )
