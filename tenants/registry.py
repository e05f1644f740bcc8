"""A registry of things declared one per module and keyed by a `RequestKind` value: the
lookup both sides of a request kind use (the domain's `tenants.kinds`, the engine's
`provisioning.inputs.kinds`), so that neither writes its own."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import ClassVar, Generic, Protocol, TypeVar

from tenants.choices import RequestKind


class Keyed(Protocol):
    value: ClassVar[RequestKind]


T = TypeVar("T", bound=Keyed)


class Registry(Generic[T]):
    def __init__(self, declared: Iterable[T]) -> None:
        self._by_value: dict[str, T] = {}
        for item in declared:
            if item.value in self._by_value:
                raise ValueError(f"{item.value!r} is declared twice")
            self._by_value[item.value] = item

    def __contains__(self, value: object) -> bool:
        return value in self._by_value

    def __getitem__(self, value: str) -> T:
        """KeyError for a value nothing declares."""
        return self._by_value[value]

    def __iter__(self) -> Iterator[T]:
        return iter(self._by_value.values())

    def values(self) -> tuple[str, ...]:
        return tuple(self._by_value)

    def where(self, **declared: object) -> tuple[str, ...]:
        """The values of the items that declare all of these (`where(quiet=True)`)."""
        return tuple(
            value
            for value, item in self._by_value.items()
            if all(getattr(item, name) == want for name, want in declared.items())
        )
