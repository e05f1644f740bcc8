"""How the provisioning engine reaches a cluster, and what it does when it cannot, against the
Kubernetes API stand-in over real HTTP: an outage makes the request wait and resume by itself
(or fail once past the deadline), with a message that names no address; a configuration only
a person can fix (an unusable kubeconfig, http:// to an https:// API server, a wrong token)
fails at once; the credentials of a cluster that requires a token reach it."""

from datetime import timedelta

import pytest
import yaml
from django.utils import timezone

from kubesandbox import KubeSandbox
from provisioning import jobs, reconcile, tasks
from provisioning.kube import KubeError
from tenants import demo
from tenants.choices import GuardrailsMode, RequestState
from tenants.conditions import Phase
from tenants.models import Cluster, Request
from tests.support.cluster import stand_in
from tests.support.jobs_engine import (
    approved,
)
from tests.support.prov_world import demo_people
from tests.support.workflow import converge


def test_persistent_server_errors_make_the_request_wait_then_it_resumes_by_itself(
    engine_world, engine_sandbox, settings, monkeypatch
):
    settings.BERTH_OUTAGE_DEADLINE_SECONDS = 3600
    handed_out: list[int] = []
    monkeypatch.setattr(
        tasks.converge,
        "delay",  # the broker's part
        lambda request_id, companions=(): handed_out.append(request_id),
    )
    # The API answers 503 to every apply until it comes back (below).
    engine_sandbox.inject_faults(status=503, times=10_000, method="PATCH")
    tenancy_request = converge(approved(engine_world))
    engine_sandbox.clear_faults()

    assert tenancy_request.state == RequestState.PROVISIONING  # not failed: waiting
    assert tenancy_request.waiting_since is not None
    assert tenancy_request.next_try_at > tenancy_request.waiting_since
    assert "503" in tenancy_request.wait_reason
    first = tenancy_request.runs.get().steps[0]
    assert first["outcome"] == "pending"  # the next try starts there
    # Nobody takes it before its time: a worker asking now is told it is busy.
    assert reconcile.converge(request_id=tenancy_request.pk, worker="other").phase is Phase.BUSY

    tasks.sweep.run()
    assert handed_out == []  # not before its time
    Request.objects.filter(pk=tenancy_request.pk).update(
        lease_expires_at=timezone.now() - timedelta(seconds=1)
    )
    tasks.sweep.run()
    assert handed_out == [tenancy_request.pk]  # then the sweep hands it out
    tenancy_request = converge(tenancy_request)  # what the worker does with it

    assert tenancy_request.state == RequestState.READY
    assert tenancy_request.runs.count() == 1  # the same run, resumed
    assert tenancy_request.waiting_since is None and tenancy_request.wait_reason == ""


def test_unreachable_cluster_waits_with_a_message_that_names_no_address(engine_world, settings):
    settings.BERTH_OUTAGE_DEADLINE_SECONDS = 3600
    Cluster.objects.filter(pk=engine_world["cluster"].pk).update(api_url="http://127.0.0.1:9")
    tenancy_request = converge(approved(engine_world))
    assert tenancy_request.state == RequestState.PROVISIONING
    assert "cluster unreachable" in tenancy_request.wait_reason
    assert "refused the connection" in tenancy_request.wait_reason
    assert "127.0.0.1" not in tenancy_request.wait_reason
    assert ":9" not in tenancy_request.wait_reason
    # The requester sees the same over the API.
    from rest_framework.test import APIClient

    api = APIClient()
    api.force_authenticate(engine_world["developer"])
    shown = api.get(f"/api/v1/requests/{tenancy_request.pk}/").json()
    assert shown["state"] == "provisioning"
    assert shown["wait_reason"] == tenancy_request.wait_reason
    assert shown["waiting_since"] and shown["next_try_at"]
    # Its status says why too, where pages, `berth` and API clients that read only it look.
    assert shown["status_message"] == f"Waiting: {tenancy_request.wait_reason}"


def test_an_outage_past_the_deadline_fails_the_request_with_the_reason(engine_world, settings):
    settings.BERTH_OUTAGE_DEADLINE_SECONDS = 3600
    Cluster.objects.filter(pk=engine_world["cluster"].pk).update(api_url="http://127.0.0.1:9")
    tenancy_request = converge(approved(engine_world))
    deadline = timedelta(seconds=settings.BERTH_OUTAGE_DEADLINE_SECONDS)
    Request.objects.filter(pk=tenancy_request.pk).update(
        waiting_since=timezone.now() - deadline, lease_expires_at=timezone.now()
    )

    tenancy_request = converge(tenancy_request)

    assert tenancy_request.state == RequestState.FAILED
    assert "cluster unreachable" in tenancy_request.status_message
    assert "gave up after waiting since" in tenancy_request.status_message
    assert tenancy_request.waiting_since is None


def test_a_cluster_back_after_an_outage_is_provisioned_without_anyone_pressing_retry(
    engine_world, engine_sandbox, settings
):
    settings.BERTH_OUTAGE_DEADLINE_SECONDS = 3600
    engine_sandbox.stop()
    tenancy_request = converge(approved(engine_world))
    assert tenancy_request.state == RequestState.PROVISIONING and tenancy_request.waiting_since

    engine_sandbox.start()  # same port, same objects: the cluster is back
    Request.objects.filter(pk=tenancy_request.pk).update(lease_expires_at=timezone.now())
    tenancy_request = converge(tenancy_request)

    assert tenancy_request.state == RequestState.READY
    assert engine_sandbox.get("Namespace", "payments-shop-dev") is not None


def test_an_unusable_kubeconfig_fails_at_once_saying_who_fixes_it(engine_world):
    Cluster.objects.filter(pk=engine_world["cluster"].pk).update(
        auth_method="kubeconfig", credentials="clusters: [not, a, kubeconfig"
    )
    tenancy_request = converge(approved(engine_world))

    assert tenancy_request.state == RequestState.FAILED
    assert "a platform admin must correct the cluster" in tenancy_request.status_message
    assert tenancy_request.waiting_since is None


def test_an_http_url_to_an_https_api_server_fails_at_once_saying_what_to_fix(engine_world):
    with KubeSandbox(tls=True) as https_only:
        Cluster.objects.filter(pk=engine_world["cluster"].pk).update(
            api_url=https_only.url.replace("https://", "http://")
        )
        tenancy_request = converge(approved(engine_world))

    assert tenancy_request.state == RequestState.FAILED, tenancy_request.wait_reason
    assert "must start with https://" in tenancy_request.status_message
    assert str(https_only.port) not in tenancy_request.status_message


@pytest.mark.parametrize("auth_method", ["token", "kubeconfig"])
def test_cluster_credentials_reach_a_cluster_that_requires_a_token(db, auth_method):
    with stand_in(token="cluster-token-123") as secured:
        demo.seed(sandbox_api_url=secured.url)
        credentials = {
            "token": "cluster-token-123",
            "kubeconfig": yaml.safe_dump(secured.kubeconfig()),
        }[auth_method]
        cluster = Cluster.objects.get(name="sandbox")
        cluster.auth_method, cluster.credentials = auth_method, credentials
        # Berth is this stand-in's admin, whom Berth's guardrails would not exempt.
        cluster.guardrails = GuardrailsMode.EXTERNAL
        cluster.save()
        tenancy_request = converge(approved(demo_people()))

        assert tenancy_request.state == RequestState.READY
        assert secured.get("Namespace", "payments-shop-dev") is not None


def test_wrong_cluster_token_fails_fast_with_unauthorized(db):
    with KubeSandbox(token="right-token") as secured:
        demo.seed(sandbox_api_url=secured.url)
        cluster = Cluster.objects.get(name="sandbox")
        cluster.credentials = "wrong-token"
        cluster.save()
        with pytest.raises(KubeError) as refused:
            jobs.cluster_client(cluster).version()
    assert refused.value.status == 401
    assert refused.value.attempts == 1
