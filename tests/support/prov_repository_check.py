"""Fixtures of the tests that set a tenant's repository over the API and check it
(tests/provisioning/gitops/test_repository_write_check.py, tests/security/test_egress_*.py):
a platform admin's API client, and the repository checks queued instead of sent to a broker."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from tenants import tasks
from tests.support.factories import UserFactory


@pytest.fixture
def admin_api(db):
    api = APIClient()
    api.force_authenticate(UserFactory(username="pat", is_platform_admin=True))
    return api


@pytest.fixture
def queued(monkeypatch):
    """The repository checks queued, instead of a broker: (tenant id, queued at) each."""
    calls = []
    monkeypatch.setattr(tasks.check_repository, "delay", lambda *args: calls.append(args))
    return calls
