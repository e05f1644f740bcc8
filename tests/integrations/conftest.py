"""Fixtures of the tests of Berth's integrations with other tools (integrations/)."""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pytest_django import Settings
from pytest_django.live_server_helper import LiveServer

from tests.berth_cli.conftest import live_berth


@pytest.fixture
def live(live_server: LiveServer, settings: Settings, tmp_path: Path) -> Iterator[dict[str, Any]]:
    """A live Berth seeded with the demo, its worker's jobs run as they are queued, and API
    tokens of dev, olivia and sam (tests/berth_cli/conftest.py's live_berth)."""
    with live_berth(live_server, settings, tmp_path, fenced=False) as running:
        yield running
