"""Headless Chromium (Debian's package) driven by Playwright, for tests that look at pages."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("BERTH_CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts"  # git-ignored
# The docs' pictures (docs/screenshots/) are retaken only by `make screenshots`, which names
# them here; any other run keeps its pictures among the artifacts, leaving the docs as they are.
SCREENSHOTS_DIR_VARIABLE = "BERTH_SCREENSHOTS_DIR"

needs_chromium = pytest.mark.skipif(
    not shutil.which(CHROMIUM),
    reason=f"needs Chromium at {CHROMIUM} (apt-get install chromium); .ci/run installs it",
)


def launch_args() -> list[str]:
    return [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
    ]


def screenshot(page, name: str) -> Path:
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def docs_screenshots_dir() -> Path:
    """Where docs pictures go: $BERTH_SCREENSHOTS_DIR (`make screenshots`: docs/screenshots),
    else artifacts/screenshots."""
    configured = os.environ.get(SCREENSHOTS_DIR_VARIABLE)
    return Path(configured) if configured else ARTIFACTS / "screenshots"


def docs_screenshot(page, name: str, selector: str | None = None) -> Path:
    """A picture of the page as the docs show it (of one element when `selector` names it),
    in docs_screenshots_dir()."""
    path = docs_screenshots_dir() / f"{name}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    if selector:
        page.locator(selector).screenshot(path=str(path))
    else:
        page.screenshot(path=str(path), full_page=True)
    return path


def signed_in_page(browser, live_server, user):
    """A page in its own browser context holding a session for `user`.

    Sign-in itself is tested through the identity provider (test_browser_signin); here the
    session is made directly so the test is about the workflow.
    """
    from django.conf import settings
    from django.test import Client

    client = Client()
    client.force_login(user)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_cookies(
        [
            {
                "name": settings.SESSION_COOKIE_NAME,
                "value": client.cookies[settings.SESSION_COOKIE_NAME].value,
                "url": live_server.url,
            }
        ]
    )
    return context.new_page()


def serious_violations(page) -> list[str]:
    """The ids of axe-core's serious and critical findings on the page as it stands."""
    from axe_playwright_python.sync_playwright import Axe

    return [
        violation["id"]
        for violation in Axe().run(page).response["violations"]
        if violation["impact"] in {"serious", "critical"}
    ]
