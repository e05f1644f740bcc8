"""GET /metrics: what Prometheus scrapes after a real provisioning run against the sandbox."""

import re

import pytest
from django.conf import settings
from django.urls import reverse

from kubesandbox import DEFAULT_NAMESPACES, KubeSandbox
from kubesandbox.testing import upstream_crds
from portal.celery import app as celery_app
from portal.metrics import queue_depth
from portal.sandbox import PLATFORM_NAMESPACES
from provisioning import jobs, reconcile
from provisioning.plan import ObjectRef
from tenants import demo
from tenants.choices import GuardrailsMode, RequestState
from tenants.conditions import Phase
from tenants.models import Cluster, Namespace, Request, Tenant, User
from tests.support.integration import celery_worker, needs_postgres_and_redis, wait_for
from tests.support.metrics import GIT_FAILURES, scrape
from tests.support.workflow import approve_if_needed, ask_for_namespace

TOKEN = "metrics-token-for-tests-0123456789"


@pytest.fixture
def sandbox():
    with KubeSandbox(
        crds=upstream_crds(),
        termination_seconds=0.2,
        namespaces=(*DEFAULT_NAMESPACES, *PLATFORM_NAMESPACES),
    ) as running:
        yield running


def submit_and_approve(sandbox_url: str) -> Request:
    demo.seed(sandbox_api_url=sandbox_url)
    # Berth is the stand-in's anonymous admin here, whom Berth's guardrails would not
    # exempt: a cluster fenced by the platform's own admission (tests/support/cluster.py seed_demo).
    Cluster.objects.filter(name="sandbox").update(guardrails=GuardrailsMode.EXTERNAL)
    submitted = ask_for_namespace(
        Tenant.objects.get(slug="payments"),
        User.objects.get(username="dev"),
        app="shop",
        cpu="1",
        memory="2Gi",
        storage="5Gi",
    )
    approve_if_needed(submitted, approver=User.objects.get(username="pat"))
    return submitted


def provision_one_namespace(sandbox_url: str, capture_on_commit) -> Namespace:
    submitted = submit_and_approve(sandbox_url)
    # The run's end is observed when its transition commits, as in a worker.
    with capture_on_commit(execute=True):
        assert reconcile.converge(request_id=submitted.pk, worker="w").phase is Phase.READY
    return Namespace.objects.get(name="payments-shop-dev")


def test_metrics_show_provisioning_requests_queue_drift_and_page_latency(
    db, client, sandbox, django_capture_on_commit_callbacks
):
    # Counters add up over the whole test session (one multiprocess directory), so what a
    # test checks is what it changed; this one pushes nothing to git.
    git_failures_before = scrape(client)[GIT_FAILURES]
    namespace = provision_one_namespace(sandbox.url, django_capture_on_commit_callbacks)
    namespace.tier.auto_repair_drift = False
    namespace.tier.save()
    jobs.cluster_client(namespace.cluster).delete(
        ObjectRef("networking.k8s.io/v1", "NetworkPolicy", "berth-allow-dns", namespace.name)
    )
    assert jobs.sweep_namespace(namespace)  # drift found and recorded
    assert client.get(reverse("login")).status_code == 200

    samples = scrape(client)

    assert samples[("berth_provisioning_duration_seconds_count", (("outcome", "ready"),))] >= 1
    assert samples[("berth_requests", (("state", "ready"),))] == 1.0
    assert samples[("berth_requests", (("state", "failed"),))] == 0.0
    queue = (("queue", settings.CELERY_TASK_DEFAULT_QUEUE),)
    assert ("berth_queue_depth", queue) in samples
    assert samples[GIT_FAILURES] == git_failures_before  # exposed (0.0 until a push fails)
    assert samples[("berth_drifted_namespaces", ())] == 1.0
    assert samples[("berth_drift_findings", ())] >= 1.0
    page = (("method", "GET"), ("status", "200"), ("view", "login"))
    assert samples[("berth_http_request_duration_seconds_count", page)] >= 1


def test_the_exposition_reads_as_prometheus_text(db, client):
    text = client.get("/metrics").content.decode()

    assert "# TYPE berth_requests gauge" in text
    assert 'berth_requests{state="ready"} 0.0' in text
    assert re.search(r"^berth_git_push_failures_total \d+\.\d+$", text, re.MULTILINE)


def test_scrapes_and_probes_are_not_counted_as_page_latency(db, client):
    for path in ("/metrics", "/healthz", "/readyz", "/metrics"):
        client.get(path)

    views = {dict(labels).get("view") for (_, labels) in scrape(client)}

    assert not views & {"metrics", "healthz", "readyz"}


def test_metrics_need_the_bearer_token_when_one_is_set(db, client, settings):
    settings.METRICS_TOKEN = TOKEN

    assert client.get("/metrics").status_code == 401
    wrong = client.get("/metrics", HTTP_AUTHORIZATION="Bearer not-the-token")
    assert wrong.status_code == 401
    assert wrong["WWW-Authenticate"].startswith("Bearer")
    assert client.get("/metrics", HTTP_AUTHORIZATION=f"Basic {TOKEN}").status_code == 401
    assert ("berth_requests", (("state", "ready"),)) in scrape(
        client, HTTP_AUTHORIZATION=f"Bearer {TOKEN}"
    )


def test_metrics_are_open_without_a_token(db, client, settings):
    settings.METRICS_TOKEN = ""

    assert client.get("/metrics").status_code == 200


def test_queue_depth_counts_messages_waiting_in_the_broker():
    queue = f"{settings.CELERY_TASK_DEFAULT_QUEUE}-depth"
    before = queue_depth(queue)
    try:
        for _ in range(2):
            celery_app.send_task("provisioning.heartbeat", queue=queue)
        assert queue_depth(queue) == before + 2
    finally:
        with celery_app.connection_for_write() as connection:
            connection.default_channel.queue_purge(queue)
    assert queue_depth(queue) == 0


READY_RUNS = ("berth_provisioning_duration_seconds_count", (("outcome", "ready"),))


@pytest.mark.integration
@needs_postgres_and_redis
@pytest.mark.django_db(transaction=True)
def test_a_run_a_worker_process_finished_shows_on_the_webs_metrics(client, sandbox):
    """Worker and web are separate processes sharing the multiprocess directory."""
    before = scrape(client).get(READY_RUNS, 0.0)

    with celery_worker(name="metrics"):
        tenancy_request = submit_and_approve(sandbox.url)  # enqueued when the approval commits
        wait_for(
            lambda: Request.objects.get(pk=tenancy_request.pk).state == RequestState.READY,
            what="the request to be ready",
        )
        samples = wait_for(
            lambda: (found := scrape(client)).get(READY_RUNS, 0.0) > before and found,
            what="the worker's observation on /metrics",
        )

    assert samples[("berth_requests", (("state", "ready"),))] == 1.0
