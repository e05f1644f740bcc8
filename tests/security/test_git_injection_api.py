"""A tenant's GitOps repository URL, branch and base path never reach git as an option, a
shell or a path outside the repository, over the REST API: onboarding and PATCH refuse a
hostile value with a message naming the field, nothing stored, nothing run (the injection as
it was reported among them); a good repository is taken with its path normalised, and a
local one only when the operator allows insecure git."""

from __future__ import annotations

import pytest

from tenants.models import AuditEvent, Request, Tenant
from tests.support.api import api, assert_problem
from tests.support.security_git import CORPUS, messages_for, names_the_field, stored

pytestmark = pytest.mark.usefixtures("production_git")


@pytest.mark.parametrize(("field", "value"), CORPUS)
def test_onboarding_over_the_api_refuses_a_hostile_repository_value(
    api_world, marker, field, value
):
    body = {
        "slug": "ledger",
        "name": "Ledger",
        "allowed_clusters": ["sandbox"],
        "gitops_repo_url": "https://git.example.com/ledger.git",
        field: value,
    }

    response = api(api_world.admin).post("/api/v1/tenants/", body, format="json")

    errors = assert_problem(response, 400, "validation-error")["errors"]
    assert names_the_field(messages_for(errors, field)), errors
    assert not Tenant.objects.filter(slug="ledger").exists()
    assert not AuditEvent.objects.filter(action="tenant.onboard").exists()
    assert not marker.exists()


@pytest.mark.parametrize(("field", "value"), CORPUS)
def test_a_patch_with_a_hostile_repository_value_changes_nothing_and_runs_nothing(
    api_world, marker, field, value
):
    before = stored("search")
    requests = Request.objects.count()

    response = api(api_world.admin).patch("/api/v1/tenants/search/", {field: value}, format="json")

    errors = assert_problem(response, 400, "validation-error")["errors"]
    assert names_the_field(messages_for(errors, field)), errors
    assert stored("search") == before
    assert Request.objects.count() == requests  # no sync asked for
    assert not AuditEvent.objects.filter(action="tenant.update").exists()
    assert not marker.exists()


def test_the_reported_injection_is_refused_and_git_never_sees_it(api_world, marker):
    """The finding as reported: a platform admin PATCHes the search tenant's URL."""
    response = api(api_world.admin).patch(
        "/api/v1/tenants/search/",
        {"gitops_repo_url": "--upload-pack=id>$HOME.id;x:y"},
        format="json",
    )

    errors = assert_problem(response, 400)["errors"]
    assert "option" in " ".join(errors["gitops_repo_url"])
    assert stored("search")["gitops_repo_url"] == ""
    assert not list((marker.parent.parent).glob("**/*.id"))


def test_a_good_repository_is_taken_with_its_path_normalised(api_world):
    response = api(api_world.admin).patch(
        "/api/v1/tenants/search/",
        {
            "gitops_repo_url": "git@git.example.com:search/deploy.git",
            "gitops_branch": "release/2026.1",
            "gitops_path": "./clusters//prod/",
        },
        format="json",
    )

    assert response.status_code == 200, response.json()
    assert stored("search") == {
        "gitops_repo_url": "git@git.example.com:search/deploy.git",
        "gitops_branch": "release/2026.1",
        "gitops_path": "clusters/prod",
    }


def test_a_local_repository_url_needs_the_operator_to_allow_insecure_git(api_world, settings):
    url = "http://127.0.0.1:8002/search.git"
    refused = api(api_world.admin).patch(
        "/api/v1/tenants/payments/", {"gitops_repo_url": url}, format="json"
    )
    assert "BERTH_GIT_ALLOW_INSECURE" in " ".join(
        assert_problem(refused, 400)["errors"]["gitops_repo_url"]
    )

    settings.BERTH_GIT_ALLOW_INSECURE = True
    taken = api(api_world.admin).patch(
        "/api/v1/tenants/payments/", {"gitops_repo_url": url}, format="json"
    )
    assert taken.status_code == 200, taken.json()
