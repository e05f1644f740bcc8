import os
from collections.abc import Iterator

import pytest

from tests.browser import ARTIFACTS, CHROMIUM, launch_args
from tests.factories import MembershipFactory, TenantFactory, UserFactory


@pytest.fixture
def tenant(db):
    return TenantFactory(slug="payments")


@pytest.fixture
def developer(tenant):
    return MembershipFactory(tenant=tenant, user=UserFactory(username="dev")).user


@pytest.fixture
def platform_admin(db):
    return UserFactory(username="pat", is_platform_admin=True)


@pytest.fixture
def browser() -> Iterator:
    from playwright.sync_api import sync_playwright

    # Playwright runs an event loop in this thread; test data is written before it starts.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=launch_args())
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def page(browser) -> Iterator:
    yield browser.new_page(viewport={"width": 1280, "height": 720})
