"""A real worker process takes jobs off the real broker and writes to the shared database."""

import pytest

from provisioning.models import WorkerHeartbeat
from provisioning.tasks import heartbeat
from tests.support.integration import celery_worker, needs_postgres_and_redis, wait_for

pytestmark = [pytest.mark.integration, needs_postgres_and_redis]


@pytest.mark.django_db(transaction=True)
def test_worker_process_runs_a_job_sent_through_redis():
    heartbeat.delay()  # queued before the worker exists: the broker keeps it

    with celery_worker(name="heartbeat-test"):
        beat = wait_for(
            lambda: WorkerHeartbeat.objects.filter(hostname__startswith="heartbeat-test@").first(),
            what="the worker's heartbeat row",
        )

    assert beat.seen_at is not None
