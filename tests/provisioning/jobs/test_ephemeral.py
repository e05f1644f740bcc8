"""Ephemeral environments end to end: created by CI over the API, provisioned into the
Kubernetes API stand-in and a local bare repository, warned about, extended, and
decommissioned at expiry by the beat job. The clock is moved with time-machine, never slept on."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.core import mail
from django.utils import timezone
from rest_framework.test import APIClient

from kubesandbox import KubeSandbox
from tenants import services, tasks
from tenants.choices import EndCause, EnvironmentState, NamespaceState, RequestKind, RequestState
from tenants.models import (
    AuditEvent,
    EphemeralEnvironment,
    Namespace,
    Request,
    User,
)
from tenants.tasks import send_expiry_warning
from tests.support.ephemeral import converge_all, create, tenant_namespaces
from tests.support.gitserver import commits_on, files_on


@pytest.mark.scale
def test_fifty_environments_with_a_minute_to_live_all_go_and_leave_cluster_and_git_clean(
    ephemeral_world, sandbox
):
    api, bare = ephemeral_world["api"], ephemeral_world["bare"]
    start = timezone.now()
    with time_machine.travel(start, tick=True) as clock:
        for number in range(50):
            response = create(api, f"review-{number}", ttl="1m")
            assert response.status_code == 201, response.json()
            body = response.json()
            # The answer names the namespace before anything exists in the cluster.
            assert body["namespace"] == f"payments-shop-review-{number}"
            assert body["state"] == EnvironmentState.STARTING
            assert sandbox.get("Namespace", body["namespace"]) is None
        assert (
            Request.objects.filter(kind=RequestKind.EPHEMERAL, state=RequestState.APPROVED).count()
            == 50
        )

        created = converge_all(RequestKind.EPHEMERAL)
        assert [r.state for r in created] == [RequestState.READY] * 50
        assert len(tenant_namespaces(sandbox)) == 50
        files = files_on(bare)
        assert "apps/shop/review/review-7/application.yaml" in files
        assert "apps/shop/overlays/review/review-7/kustomization.yaml" in files
        assert EphemeralEnvironment.objects.filter(state=EnvironmentState.LIVE).count() == 50

        # Renewed before it runs out: review-7 gets ten more minutes.
        keeper = EphemeralEnvironment.objects.get(slug="review-7")
        response = api.post(
            f"/api/v1/environments/{keeper.pk}/extend/", {"ttl": "10m"}, format="json"
        )
        assert response.status_code == 200, response.json()

        clock.shift(timedelta(minutes=2))
        result = tasks.expire_environments()
        assert len(result["ended"]) == 49
        assert keeper.pk not in result["ended"]
        # Run twice (two beat ticks, or two schedulers): nothing is ended twice.
        assert tasks.expire_environments()["ended"] == []
        assert Request.objects.filter(kind=RequestKind.END_ENVIRONMENT).count() == 49

        ended = converge_all(RequestKind.END_ENVIRONMENT)
        assert [r.state for r in ended] == [RequestState.READY] * 49
        assert tenant_namespaces(sandbox) == {"payments-shop-review-7"}
        files = files_on(bare)
        assert not [
            path
            for path in files
            if path.startswith("apps/shop/") and "review-7" not in path and "/base/" not in path
        ]
        assert "apps/shop/review/review-7/application.yaml" in files
        # Each environment went in one commit: namespace and files together.
        removals = [c for c in commits_on(bare) if c["subject"].startswith("Remove review-")]
        assert len(removals) == 49
        assert all(
            env.state == EnvironmentState.ENDED and env.end_cause == EndCause.EXPIRED
            for env in EphemeralEnvironment.objects.exclude(pk=keeper.pk)
        )
        assert set(
            Request.objects.filter(kind=RequestKind.EPHEMERAL)
            .exclude(pk=keeper.request_id)
            .values_list("state", flat=True)
        ) == {RequestState.DECOMMISSIONED}
        # Berth itself ended them, on the record.
        expiries = AuditEvent.objects.filter(
            action="request.submit", object_id__in=[str(r.pk) for r in ended]
        )
        assert expiries.count() == 49
        assert set(expiries.values_list("actor_label", flat=True)) == {"system"}

        clock.shift(timedelta(minutes=10))
        assert tasks.expire_environments()["ended"] == [keeper.pk]
        assert [r.state for r in converge_all(RequestKind.END_ENVIRONMENT)] == [RequestState.READY]

    assert tenant_namespaces(sandbox) == set()
    # Only the index of sandbox is left (the tenant's roots stay), listing nothing.
    left = files_on(bare)
    assert set(left) == {"README.md", "clusters/sandbox/argocd/kustomization.yaml"}
    assert "resources: []" in left["clusters/sandbox/argocd/kustomization.yaml"]
    assert (
        not Namespace.objects.exclude(state=NamespaceState.DECOMMISSIONED)
        .filter(name__startswith="payments-shop-")
        .exists()
    )


def test_renewal_before_expiry_keeps_it_alive_and_never_past_the_maximum(ephemeral_world, sandbox):
    api = ephemeral_world["api"]
    start = timezone.now()
    with time_machine.travel(start, tick=False) as clock:
        body = create(api, "review-1", ttl="1h").json()
        converge_all(RequestKind.EPHEMERAL)
        clock.shift(timedelta(minutes=50))
        response = api.post(
            f"/api/v1/environments/{body['id']}/extend/", {"ttl": "2h"}, format="json"
        )
        assert response.status_code == 200
        clock.shift(timedelta(minutes=30))  # past the first expiry
        assert tasks.expire_environments()["ended"] == []
        assert EphemeralEnvironment.objects.get(pk=body["id"]).state == EnvironmentState.LIVE

        # The review tier lives at most 14 days from creation.
        response = api.post(
            f"/api/v1/environments/{body['id']}/extend/", {"ttl": "14d"}, format="json"
        )
        assert response.status_code == 400
        assert "at most" in response.json()["errors"]["ttl"][0]
        assert EphemeralEnvironment.objects.get(pk=body["id"]).expires_at == (
            start + timedelta(minutes=50) + timedelta(hours=2)
        )


def test_owners_are_warned_once_ahead_of_expiry(ephemeral_world, sandbox, settings):
    settings.EXPIRY_WARNING = timedelta(minutes=30)
    api = ephemeral_world["api"]
    start = timezone.now()
    with time_machine.travel(start, tick=False) as clock:
        body = create(api, "review-2", ttl="2h").json()
        converge_all(RequestKind.EPHEMERAL)
        assert services.environments_to_warn() == []
        clock.shift(timedelta(minutes=95))
        warned = services.environments_to_warn()
        assert [e.pk for e in warned] == [body["id"]]
        assert services.environments_to_warn() == []  # once
        send_expiry_warning(body["id"])
    message = mail.outbox[-1]
    assert "review-2" in message.subject
    assert "dev@" in " ".join(message.to) or ephemeral_world["developer"].email in message.to
    assert "extend" in message.body.lower()
    assert (
        AuditEvent.objects.filter(
            action="environment.expiry_warning", object_id=str(body["id"])
        ).count()
        == 1
    )


def appproject_destinations(sandbox: KubeSandbox) -> set[str]:
    project = sandbox.get("AppProject", "payments", "argocd", api_version="argoproj.io/v1alpha1")
    return {d["namespace"] for d in project["spec"]["destinations"]} if project else set()


def test_ci_stop_ends_it_and_a_second_stop_changes_nothing(ephemeral_world, sandbox):
    api, bare = ephemeral_world["api"], ephemeral_world["bare"]
    body = create(api, "review-3").json()
    converge_all(RequestKind.EPHEMERAL)
    assert "payments-shop-review-3" in tenant_namespaces(sandbox)
    # The review app's plan applies the tenant's AppProject naming its namespace.
    assert "payments-shop-review-3" in appproject_destinations(sandbox)

    stop = {
        "tenant": "payments",
        "project": "shop",
        "env_slug": "review-3",
        "reason": "merge request merged",
    }
    first = api.post("/api/v1/environments/stop/", stop, format="json")
    assert first.status_code == 202
    assert first.json()["state"] == EnvironmentState.ENDING
    again = api.post("/api/v1/environments/stop/", stop, format="json")
    assert again.status_code == 200
    assert Request.objects.filter(kind=RequestKind.END_ENVIRONMENT).count() == 1

    converge_all(RequestKind.END_ENVIRONMENT)
    environment = EphemeralEnvironment.objects.get(pk=body["id"])
    assert environment.state == EnvironmentState.ENDED
    assert environment.end_cause == EndCause.STOPPED
    assert tenant_namespaces(sandbox) == set()
    assert "payments-shop-review-3" not in appproject_destinations(sandbox)
    assert not [p for p in files_on(bare) if p.startswith("apps/shop/review/")]
    missing = api.post(
        "/api/v1/environments/stop/", {**stop, "env_slug": "review-99"}, format="json"
    )
    assert missing.status_code == 404


def test_a_shared_namespace_hosts_several_and_outlives_them(ephemeral_world, sandbox):
    api, bare = ephemeral_world["api"], ephemeral_world["bare"]
    rules = {"rules": [{"namespace": "payments-anything"}]}
    refused = api.put("/api/v1/tenants/payments/environment-rules/", rules, format="json")
    assert refused.status_code == 403  # members deploy; owners decide where
    owner = APIClient()
    owner.force_authenticate(User.objects.get(username="olivia"))
    response = owner.put(
        "/api/v1/tenants/payments/environment-rules/",
        {
            "rules": [
                {"if": 'env_slug.startsWith("review")', "namespace": "payments-review-apps"},
                {"namespace": "$TENANT-$PROJECT-$ENV_SLUG"},
            ]
        },
        format="json",
    )
    assert response.status_code == 200, response.json()

    first = create(api, "review-10").json()
    assert first["namespace"] == "payments-review-apps"
    converge_all(RequestKind.EPHEMERAL)
    second = create(api, "review-11").json()
    assert second["namespace"] == "payments-review-apps"
    assert second["shares_namespace"] is True
    converge_all(RequestKind.EPHEMERAL)
    other = create(api, "staging-like").json()
    assert other["namespace"] == "payments-shop-staging-like"
    converge_all(RequestKind.EPHEMERAL)

    files = files_on(bare)
    assert "apps/shop/review/review-10/application.yaml" in files
    assert "apps/shop/review/review-11/application.yaml" in files
    assert "name: payments-shop-review-10" in files["apps/shop/review/review-10/application.yaml"]

    for environment in (first, second):
        services.end_environment(
            environment_id=environment["id"],
            actor=ephemeral_world["developer"],
            cause=EndCause.ENDED_BY_USER,
        )
    converge_all(RequestKind.END_ENVIRONMENT)
    # The shared namespace stays (other environments may come); only their files went.
    assert sandbox.get("Namespace", "payments-review-apps") is not None
    files = files_on(bare)
    assert not [p for p in files if "review-1" in p]
    assert "apps/shop/review/staging-like/application.yaml" in files


def test_dry_run_names_the_namespace_and_creates_nothing(ephemeral_world, sandbox):
    api = ephemeral_world["api"]
    long_slug = "review-" + "x" * 50
    response = api.post(
        "/api/v1/environments/?dry_run=true",
        {"tenant": "payments", "project": "shop", "env_slug": long_slug},
        format="json",
    )
    assert response.status_code == 200, response.json()
    name = response.json()["namespace"]
    assert len(name) == 63
    assert name.startswith("payments-shop-review-xxx")
    assert response.json()["creates_namespace"] is True
    assert not EphemeralEnvironment.objects.exists()
    assert not Request.objects.exists()
    # The same input creates exactly the namespace the dry run named.
    created = create(api, long_slug, mr_id="").json()
    assert created["namespace"] == name
