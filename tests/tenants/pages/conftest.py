"""Fixtures the tests of the browser's pages share (Django test client).

The pages' tests take tests/conftest.py's `demo_world` (a dict: payments, its developer,
owner and platform admin, and an outsider from search)."""

import pytest

from tenants.models import Project, Request
from tests.support.workflow import ask_for_namespace


@pytest.fixture
def checkout(demo_world) -> Project:
    """payments' checkout project, where the environment pages' tests start environments."""
    return Project.objects.create(tenant=demo_world["tenant"], name="checkout")


@pytest.fixture
def submitted(demo_world) -> Request:
    """A prod namespace: the default policy has a platform admin decide it."""
    return ask_for_namespace(
        demo_world["tenant"],
        demo_world["developer"],
        app="shop",
        tier="prod",
        cpu="1",
        memory="1Gi",
    )
