"""What the egress tests share (tests/security/test_egress_*.py; their fixtures `no_loopback`
and `admin_api` are in tests/security/conftest.py)."""

from __future__ import annotations

import socket


def resolving(monkeypatch, names: dict[str, str]) -> None:
    """Make these names resolve (for Berth's egress check) to these addresses."""
    real = socket.getaddrinfo

    def fake(host, port, *args, **kwargs):
        if host in names:
            return real(names[host], port, *args, **kwargs)
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr("tenants.egress.socket.getaddrinfo", fake)
