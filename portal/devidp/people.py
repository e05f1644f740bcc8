"""The demo people of tenants.demo, as plain data the development provider can seed.

tenants.demo belongs to Berth's Django project, whose models cannot be imported inside this
one, so a short-lived interpreter with Berth's settings reads PEOPLE and prints it as JSON.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent.parent

_READ_PEOPLE = """
import json, django
django.setup()
from tenants.demo import PEOPLE
print(json.dumps([
    {"username": p.username, "first_name": p.first_name, "last_name": p.last_name,
     "email": p.email, "groups": list(p.groups)}
    for p in PEOPLE
]))
"""


def berth_demo_people() -> list[dict]:
    # Only demo data is read: Berth's sign-in settings do not matter (and may be partial here).
    env = {name: value for name, value in os.environ.items() if not name.startswith("OIDC_")}
    env["DJANGO_SETTINGS_MODULE"] = "portal.settings"
    result = subprocess.run(  # noqa: S603 - our own interpreter and code
        [sys.executable, "-c", _READ_PEOPLE],
        cwd=BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    if result.returncode != 0:
        raise RuntimeError(f"could not read the demo people from tenants.demo:\n{result.stderr}")
    return json.loads(result.stdout.strip().splitlines()[-1])
