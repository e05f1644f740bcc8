"""The egress allow list itself (BERTH_EGRESS_ALLOW): an invalid network in it stops Berth at
start, a network allowed lets exactly that network through, and Berth's own names and
addresses are refused whatever it allows."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tenants.egress import EgressRefused, check_host
from tests.support.security_egress import resolving

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.processes
def test_an_invalid_network_in_the_allow_list_stops_berth_at_start(tmp_path):
    result = subprocess.run(
        [sys.executable, "-c", "import portal.settings"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={
            **os.environ,
            "BERTH_EGRESS_ALLOW": "127.0.0.0/8,10.0.0.0/33",
            "BERTH_DATA_DIR": str(tmp_path),
            "SECRET_KEY": "x" * 50,
            "BERTH_FERNET_KEYS": "q8Qh7Jqg0r4mX2eQnYV1m1cVt9C9bq0z6xk3h8W5e3k=",
        },
        timeout=120,
    )
    assert result.returncode != 0
    assert "BERTH_EGRESS_ALLOW: '10.0.0.0/33' is not a network" in result.stderr


def test_allowing_a_network_lets_exactly_that_network_through(settings):
    settings.BERTH_EGRESS_ALLOW = ["10.20.0.0/16"]
    assert [str(a) for a in check_host("10.20.3.4", 443)] == ["10.20.3.4"]
    with pytest.raises(EgressRefused, match="10.21.0.1 is a private address"):
        check_host("10.21.0.1", 443)
    with pytest.raises(EgressRefused, match="loopback"):
        check_host("127.0.0.1", 443)


def test_berths_own_names_and_addresses_are_refused(settings, monkeypatch):
    resolving(monkeypatch, {"berth.example.org": "8.8.8.8"})
    settings.ALLOWED_HOSTS = ["berth.example.org", "8.8.4.4"]
    with pytest.raises(EgressRefused, match="berth.example.org is one of this Berth's own"):
        check_host("berth.example.org", 443)
    with pytest.raises(EgressRefused, match="8.8.4.4 is this Berth's own address"):
        check_host("8.8.4.4", 443)
