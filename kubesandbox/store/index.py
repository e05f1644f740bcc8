"""The store's objects, keyed by (group, plural, namespace, name) and reachable by type and
namespace without a scan: the authorizer and admission read a few objects of one type on
every request, and a scan of every object made each request slower as the cluster filled."""

from __future__ import annotations

from collections.abc import Iterator

from ..objects import Key


class ObjectIndex:
    def __init__(self) -> None:
        self._all: dict[Key, dict] = {}
        # (group, plural) -> namespace ("" when cluster-scoped) -> key -> object
        self._by_type: dict[tuple[str, str], dict[str, dict[Key, dict]]] = {}

    def __setitem__(self, key: Key, obj: dict) -> None:
        self._all[key] = obj
        self._by_type.setdefault(key[:2], {}).setdefault(key[2], {})[key] = obj

    def pop(self, key: Key, default: dict | None = None) -> dict | None:
        obj = self._all.pop(key, None)
        if obj is None:
            return default
        namespaces = self._by_type[key[:2]]
        del namespaces[key[2]][key]
        if not namespaces[key[2]]:
            del namespaces[key[2]]
        return obj

    def clear(self) -> None:
        self._all.clear()
        self._by_type.clear()

    def get(self, key: Key, default: dict | None = None) -> dict | None:
        return self._all.get(key, default)

    def __getitem__(self, key: Key) -> dict:
        return self._all[key]

    def __contains__(self, key: object) -> bool:
        return key in self._all

    def __iter__(self) -> Iterator[Key]:
        return iter(self._all)

    def __len__(self) -> int:
        return len(self._all)

    def items(self):
        return self._all.items()

    def values(self):
        return self._all.values()

    def of_type(self, group: str, plural: str, namespace: str | None = None) -> dict[Key, dict]:
        """The objects of one type, in one namespace or (``None``) all of them, by key."""
        namespaces = self._by_type.get((group, plural), {})
        if namespace is not None:
            return dict(namespaces.get(namespace, {}))
        return {key: obj for objects in namespaces.values() for key, obj in objects.items()}
