"""The demo's people, as plain data: Berth's demo seed (tenants.demo) and the development
identity provider (portal.devidp, a Django project of its own that cannot import Berth's
models) both read them from here."""

from __future__ import annotations

from dataclasses import dataclass

PLATFORM_ADMIN_GROUP = "platform-admins"


@dataclass(frozen=True)
class DemoPerson:
    username: str
    first_name: str
    last_name: str
    groups: tuple[str, ...]

    @property
    def email(self) -> str:
        return f"{self.username}@example.com"

    @property
    def subject(self) -> str:
        """The `sub` claim the development identity provider (portal.devidp) issues to them."""
        return f"devidp-{self.username}"


PEOPLE = [
    DemoPerson("pat", "Pat", "Platform", (PLATFORM_ADMIN_GROUP,)),
    DemoPerson("olivia", "Olivia", "Owner", ("payments-owners",)),
    DemoPerson("dev", "Dana", "Developer", ("payments-devs",)),
    DemoPerson("sam", "Sam", "Searcher", ("search-devs",)),
]
