"""The demo people of tenants.demo_people, as plain data the development provider seeds.

That module imports nothing of Django, so this project (whose settings are not Berth's)
reads it directly."""

from __future__ import annotations

from tenants.demo_people import PEOPLE


def berth_demo_people() -> list[dict]:
    return [
        {
            "username": person.username,
            "first_name": person.first_name,
            "last_name": person.last_name,
            "email": person.email,
            "groups": list(person.groups),
        }
        for person in PEOPLE
    ]
