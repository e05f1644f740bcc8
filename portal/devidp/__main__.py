"""`python -m portal.devidp`: run the development identity provider (default port 8001).

Environment: BERTH_DEBUG=1 and BERTH_DEV_OIDC=1 (required), OIDC_CLIENT_ID and
OIDC_CLIENT_SECRET (Berth's client, registered here at each start), DEVIDP_URL (where this
provider is reached; default http://<host>:<port>), DEVIDP_BERTH_URLS (comma-separated URLs
of Berth, whose /oidc/callback/ are the allowed redirect URIs), BERTH_DATA_DIR.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from portal.devidp import REFUSAL, demo_password, development_enabled


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m portal.devidp", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", default=os.environ.get("BERTH_DEVIDP_PORT", "8001"))
    args = parser.parse_args(argv)

    if not development_enabled():
        print(REFUSAL, file=sys.stderr)
        return 2
    client_id = os.environ.get("OIDC_CLIENT_ID", "")
    client_secret = os.environ.get("OIDC_CLIENT_SECRET", "")
    if not (client_id and client_secret):
        print("Set OIDC_CLIENT_ID and OIDC_CLIENT_SECRET: Berth's client.", file=sys.stderr)
        return 2
    os.environ.setdefault("DEVIDP_URL", f"http://{args.host}:{args.port}")
    berth_urls = [
        url.strip().rstrip("/")
        for url in os.environ.get(
            "DEVIDP_BERTH_URLS", "http://127.0.0.1:8000,http://localhost:8000"
        ).split(",")
        if url.strip()
    ]

    from portal.devidp.people import berth_demo_people

    people = berth_demo_people()

    os.environ["DJANGO_SETTINGS_MODULE"] = "portal.devidp.settings"
    import django
    from django.conf import settings
    from django.core.management import call_command

    django.setup()
    call_command("migrate", interactive=False, verbosity=0)
    from portal.devidp import setup

    setup.ensure_signing_key(Path(settings.DATA_DIR))
    setup.ensure_berth_client(
        client_id=client_id, client_secret=client_secret, berth_urls=berth_urls
    )
    kubectl_client_id = os.environ.get("KUBE_OIDC_CLIENT_ID", "")
    if kubectl_client_id and kubectl_client_id != client_id:
        setup.ensure_kubectl_client(client_id=kubectl_client_id)
    setup.ensure_people(people)

    accounts = ", ".join(f"{p['username']} / {demo_password(p['username'])}" for p in people)
    print(
        f"Development identity provider (not for production) at {settings.SITE_URL}/\n"
        f"  issuer:   {settings.SITE_URL}/openid\n"
        f"  accounts: {accounts}",
        flush=True,
    )
    call_command("runserver", f"{args.host}:{args.port}", use_reloader=False, use_threading=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
