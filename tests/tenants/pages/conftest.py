"""Fixtures the tests of the browser's pages share (Django test client).

Here `world` is the demo world as a dict (tests/conftest.py's `demo_world`: payments, its
developer, owner and platform admin, and an outsider from search); the REST API's tests
have a `world` of their own."""

import pytest

from tenants.models import Project, Request
from tests.support.workflow import ask_for_namespace


@pytest.fixture
def world(demo_world):
    return demo_world


@pytest.fixture
def checkout(world) -> Project:
    """payments' checkout project, where the environment pages' tests start environments."""
    return Project.objects.create(tenant=world["tenant"], name="checkout")


@pytest.fixture
def submitted(world) -> Request:
    """A prod namespace: the default policy has a platform admin decide it."""
    return ask_for_namespace(
        world["tenant"], world["developer"], app="shop", tier="prod", cpu="1", memory="1Gi"
    )
