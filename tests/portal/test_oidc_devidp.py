"""The development identity provider (`python -m portal.devidp`, django-oidc-provider).

It must refuse to start outside development, and Berth's real sign-in flow must work
against it: authorize → its sign-in form (with CSRF) → no consent → callback → signed in.
"""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from portal.auth import discovery
from portal.devidp import REFUSAL
from tenants import demo
from tenants.models import Membership, User
from tests.support.id_tokens import signed_in_tokens
from tests.support.oidc_provider import running_dev_idp
from tests.support.oidc_settings import sign_in_at
from tests.support.portal_startup import setup_django

ROOT = Path(__file__).resolve().parents[2]


def start_dev_idp(tmp_path: Path, **flags: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in {"BERTH_DEBUG", "BERTH_DEV_OIDC"}}
    env.update(BERTH_DATA_DIR=str(tmp_path), OIDC_CLIENT_ID="x", OIDC_CLIENT_SECRET="y", **flags)
    return subprocess.run(
        [sys.executable, "-m", "portal.devidp", "--port", "1"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    "flags",
    [
        {},
        {"BERTH_DEV_OIDC": "1"},
        {"BERTH_DEBUG": "1"},
        {"BERTH_DEBUG": "0", "BERTH_DEV_OIDC": "1"},
    ],
    ids=["neither flag", "without BERTH_DEBUG", "without BERTH_DEV_OIDC", "with BERTH_DEBUG=0"],
)
@pytest.mark.processes
def test_development_provider_refuses_to_start_outside_development(tmp_path, flags):
    result = start_dev_idp(tmp_path, **flags)

    assert result.returncode == 2
    assert REFUSAL in result.stderr
    assert not (tmp_path / "devidp.sqlite3").exists()


@pytest.mark.processes
def test_development_provider_settings_refuse_to_load_outside_development(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in {"BERTH_DEBUG", "BERTH_DEV_OIDC"}}
    env.update(DJANGO_SETTINGS_MODULE="portal.devidp.settings", BERTH_DATA_DIR=str(tmp_path))
    result = setup_django(env)
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr and "BERTH_DEV_OIDC=1" in result.stderr


@pytest.fixture(scope="module")
def dev_idp(live_server, tmp_path_factory):
    data_dir = tmp_path_factory.mktemp("devidp")
    with running_dev_idp(berth_url=live_server.url, data_dir=data_dir) as issuer:
        yield issuer


@pytest.mark.django_db(transaction=True)
@pytest.mark.processes
def test_developer_signs_in_through_the_development_provider_with_the_right_memberships(
    live_server, dev_idp, settings
):
    demo.seed(sandbox_api_url="http://127.0.0.1:6550")
    users = User.objects.count()
    sign_in_at(
        settings,
        dev_idp,
        OIDC_PROVIDER_NAME="the development provider",
        BERTH_PLATFORM_ADMIN_GROUPS=[demo.PLATFORM_ADMIN_GROUP],
    )
    browser = requests.Session()

    signin = browser.get(f"{live_server.url}/", timeout=10)
    start = re.search(r'href="([^"]+)">Sign in with the development provider<', signin.text)
    form = browser.get(f"{live_server.url}{html.unescape(start.group(1))}", timeout=10)
    assert "Development identity provider — not for production" in form.text
    next_url = re.search(r'name="next" value="([^"]*)"', form.text).group(1)
    home = browser.post(
        form.url,
        data={
            "username": "dev",
            "password": "devdev",
            "next": html.unescape(next_url),
            "csrfmiddlewaretoken": browser.cookies["devidp_csrftoken"],
        },
        timeout=10,
    )

    assert home.url == f"{live_server.url}/", home.text[:500]
    assert "payments" in home.text and "search" not in home.text
    user = User.objects.get(username="dev")  # the seeded person, matched by `sub`
    assert user.oidc_subject == "devidp-dev"
    assert User.objects.count() == users  # nobody new
    assert dict(Membership.objects.filter(user=user).values_list("tenant__slug", "role")) == {
        "payments": "member"
    }
    discovery.clear_cache()


@pytest.mark.django_db(transaction=True)
def test_the_development_provider_issues_access_tokens_the_api_takes_and_id_tokens_it_refuses(
    live_server, dev_idp, settings
):
    """The provider `make run` starts hands out both kinds: its access token (an RFC 9068
    JWT for berth-api) works against Berth's API; the ID token from the same sign-in does
    not."""
    demo.seed(sandbox_api_url="http://127.0.0.1:6550")
    sign_in_at(settings, dev_idp, OIDC_API_AUDIENCE="berth-api")
    tokens = signed_in_tokens(dev_idp, "dev", berth_url=live_server.url)

    me = f"{live_server.url}/api/v1/me/"
    access = requests.get(
        me, headers={"Authorization": f"Bearer {tokens['access_token']}"}, timeout=10
    )
    assert access.status_code == 200, access.text
    assert access.json()["authentication"] == "oidc_access_token"
    refused = requests.get(
        me, headers={"Authorization": f"Bearer {tokens['id_token']}"}, timeout=10
    )
    assert refused.status_code == 401
    assert "not for Berth's API" in refused.json()["detail"]
    # Its userinfo endpoint still takes the JWT access token (Berth's sign-in calls it).
    info = requests.get(
        f"{dev_idp}/userinfo",
        headers={"Authorization": f"Bearer {tokens['access_token']}"},
        timeout=10,
    )
    assert info.status_code == 200 and info.json()["sub"] == "devidp-dev"
    discovery.clear_cache()
