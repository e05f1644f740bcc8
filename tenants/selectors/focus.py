"""A month of showback as FOCUS rows (tenants.focus) for one person: every tenant for a
platform admin, the tenants they belong to for anyone else (each tenant a sub account)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date, datetime
from urllib.parse import urlsplit

from django.conf import settings

from tenants import focus
from tenants.models import Tenant, User
from tenants.selectors.charges import midnight, month_pieces, next_month
from tenants.selectors.rights import is_platform_admin, tenants_for_user


def installation() -> focus.Account:
    """The billing account: this Berth, named by the host of BERTH_BASE_URL."""
    host = urlsplit(settings.BERTH_BASE_URL).netloc or settings.BERTH_BASE_URL
    return focus.Account(id=host, name=f"Berth at {host}")


def focus_rows(user: User, first: date, *, now: datetime | None = None) -> list[focus.Row]:
    """The month that starts on `first` (up to now while it runs) of the tenants `user` may
    see, as FOCUS rows."""
    tenants = None if is_platform_admin(user) else list(tenants_for_user(user))
    with _no_cycle_collection():
        found = month_pieces(first, now, tenants=tenants)
        ids = {info["tenant"] for info in found.about.values()} | set(found.adjustments)
        sub_accounts = {
            pk: (slug, name)
            for pk, slug, name in Tenant.objects.filter(pk__in=ids).values_list(
                "pk", "slug", "name"
            )
        }
        return focus.rows(
            found.pieces,
            found.about,
            found.adjustments,
            account=installation(),
            sub_accounts=sub_accounts,
            period=(midnight(first), midnight(next_month(first))),
        )


@contextmanager
def _no_cycle_collection() -> Iterator[None]:
    """The cycle collector paused while a month becomes rows: they are tens of thousands of
    new tuples in no cycle, and each collection they set off would walk every object of the
    process (on 10,000 namespaces, two fifths of the export's time). Reference counting
    frees as usual; a cycle made meanwhile is collected after."""
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()
