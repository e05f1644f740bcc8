"""Every validator is matched whole: a value with a line end after it is refused.

Python's `$` matches before a final newline, and `re.match` / DRF's RegexField with `^…$`
took `https://h/x%0a` (decoded `x\\n`) as a repository; each validator below is swept with
a raw line end and its encoded forms. A URL with a login or token before '@' is refused too:
it would be stored in plain text beside the encrypted credential field."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from rest_framework import serializers

from tenants.api.serializers.costs import CostsQuerySerializer
from tenants.api.serializers.requests import ApproveSerializer
from tenants.api.serializers.truth import TruthQuerySerializer
from tenants.payloads.environments import EphemeralPayload
from tenants.validators import (
    clean_repo_path,
    validate_branch,
    validate_dns_label,
    validate_repo_url,
)
from tests.support.api import api

LINE_ENDS = ["\n", "\r", "\r\n", "%0a", "%0A", "%0d", "%0D", "%0d%0a"]


def field_takes(make_serializer, field: str, value: str) -> str | None:
    """What the API field makes of `value`, or None when it refuses it."""
    try:
        return make_serializer().fields[field].run_validation(value)
    except serializers.ValidationError:
        return None


def validator_accepts(validate, value: str) -> bool:
    try:
        validate(value)
    except ValidationError:
        return False
    return True


CHECKS = {
    "repository URL (https)": (validate_repo_url, "https://git.example.com/org/repo.git"),
    "repository URL (ssh)": (validate_repo_url, "ssh://git@git.example.com/org/repo.git"),
    "repository URL (scp-like)": (validate_repo_url, "git@git.example.com:org/repo.git"),
    "branch": (validate_branch, "main"),
    "base path": (clean_repo_path, "clusters/sandbox"),
    "DNS label": (validate_dns_label, "payments"),
}
FIELDS = {
    "costs month": (CostsQuerySerializer, "month", "2026-11"),
    "truth namespace": (TruthQuerySerializer, "namespace", "payments-shop-dev"),
    "truth project": (TruthQuerySerializer, "project", "shop"),
    "plan digest": (ApproveSerializer, "plan_digest", "a" * 64),
    "merge request id": (lambda: EphemeralPayload(tenant=None), "mr_id", "42"),
}


@pytest.mark.parametrize("name", CHECKS)
@pytest.mark.parametrize("end", LINE_ENDS, ids=repr)
def test_a_validator_refuses_a_value_with_a_line_end_after_it(name, end, settings):
    settings.BERTH_GIT_ALLOW_INSECURE = False
    validate, good = CHECKS[name]
    assert validator_accepts(validate, good)

    assert not validator_accepts(validate, good + end)


@pytest.mark.parametrize("name", FIELDS)
@pytest.mark.parametrize("end", LINE_ENDS, ids=repr)
def test_an_api_field_never_takes_a_line_end_after_a_value(name, end):
    """Refused, or (DRF trims surrounding whitespace first) taken without the line end."""
    make_serializer, field, good = FIELDS[name]
    assert field_takes(make_serializer, field, good) == good

    assert field_takes(make_serializer, field, good + end) in (None, good)


@pytest.mark.parametrize(
    "url",
    [
        "https://bot:s3cr3t@git.example.com/org/repo.git",
        "https://ghp_0123456789abcdefABCDEF0123456789abcd@git.example.com/org/repo.git",
        "https://:s3cr3t@git.example.com/org/repo.git",
    ],
    ids=["user-and-password", "token-as-user", "password-only"],
)
def test_a_repository_url_holding_a_credential_is_refused_and_nothing_stored(api_world, url):
    before = api_world.payments.gitops_repo_url

    response = api(api_world.admin).patch(
        "/api/v1/tenants/payments/", {"gitops_repo_url": url}, format="json"
    )

    assert response.status_code == 400
    problem = str(response.json()["errors"])
    assert "repository credentials, which are encrypted" in problem
    assert "s3cr3t" not in problem and "ghp_" not in problem
    api_world.payments.refresh_from_db()
    assert api_world.payments.gitops_repo_url == before
