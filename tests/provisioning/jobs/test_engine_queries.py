"""The provisioning engine's cost, counted against the Kubernetes API stand-in: the database
work per provisioned request does not grow with the bundle (a request for three environments
costs the worker the same queries as one for a single environment) nor a batch's with its
size, the applies are one API call per object, and a run writes its progress once or, for a
slow plan, once per wave."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from provisioning import reconcile, tasks
from provisioning.reconcile import applying
from tenants.choices import RequestState
from tenants.models import Request, Tenant
from tests.support.jobs_engine import (
    approved,
    approved_many,
)
from tests.support.workflow import WORKER, converge


@pytest.fixture(autouse=True)
def progress_only_where_asked(monkeypatch):
    """Progress is written every PROGRESS_SECONDS of a run: on a busy machine a slow wave
    would add a write. Counted here: what a run costs, not how long it took; the test of
    progress itself sets it to 0."""
    monkeypatch.setattr(applying, "PROGRESS_SECONDS", float("inf"))


# Database work per provisioned request does not grow with the bundle: a request for three
# environments costs the worker the same queries as one for a single environment, and the
# applies are one API call per object.
def provision_counting_queries(request_id: int) -> tuple[int, list[str]]:
    with CaptureQueriesContext(connection) as captured:
        reconcile.converge(request_id=request_id, worker=WORKER)
    return len(captured), [query["sql"] for query in captured]


def approved_project(engine_world, app: str, tiers: list[str]):
    return approved(
        engine_world, kind="project", app=app, engine="argocd", cluster="sandbox", tiers=tiers
    )


def test_queries_per_provisioned_request_do_not_grow_with_its_objects(engine_world, engine_sandbox):
    Tenant.objects.filter(pk=engine_world["tenant"].pk).update(
        budget_cpu_millis=100_000,
        budget_memory_mib=200_000,
        budget_namespaces=50,
        budget_storage_gib=1000,
    )
    engine_world["tenant"].refresh_from_db()
    # The tenant's first request also makes the tenant's own objects, and the first to use a
    # tier's definition numbers it: not what is compared.
    reconcile.converge(
        request_id=approved_project(engine_world, "warmup", ["dev", "staging", "prod"]).pk,
        worker=WORKER,
    )

    one = approved_project(engine_world, "ledger", ["dev"])
    one_count, one_sql = provision_counting_queries(one.pk)
    three = approved_project(engine_world, "billing", ["dev", "staging", "prod"])
    engine_sandbox.clear_requests()
    three_count, three_sql = provision_counting_queries(three.pk)

    one.refresh_from_db()
    three.refresh_from_db()
    assert (one.state, three.state) == (RequestState.READY, RequestState.READY)
    three_objects = len(reconcile.current_plan(three).apply)
    assert three_objects > 2 * len(reconcile.current_plan(one).apply)
    assert three_count == one_count, "\n".join(three_sql)
    # 48 before runs held the keys they change; holding them costs five statements a
    # batch (made, claimed, renewed with the leases, released twice), whatever the number
    # of keys; showback's history one more: the allocations the run opens, in one insert;
    # and one for the namespaces the tenant's AppProject names.
    assert one_count <= 54, "\n".join(one_sql)
    # One server-side apply per object: no read before, none after.
    calls = [r for r in engine_sandbox.requests() if "/api" in r["path"]]
    assert sorted({r["method"] for r in calls}) == ["PATCH"], calls
    assert len(calls) == three_objects


def steps_written(sql: list[str]) -> int:
    """Writes of a run's steps: progress, and the last one as the run closes."""
    return sum(
        query.startswith('UPDATE "tenants_run" SET') and '"steps" =' in query for query in sql
    )


def test_a_quick_plan_writes_its_progress_once_and_a_slow_one_as_it_goes(
    engine_world, engine_sandbox, monkeypatch
):
    _, quick_sql = provision_counting_queries(approved(engine_world).pk)
    # Every wave's outcome and the GitOps step's (no repository here) at once, as the run
    # closes.
    assert steps_written(quick_sql) == 1

    # A plan slower than PROGRESS_SECONDS per wave: each wave's outcomes as it ends.
    monkeypatch.setattr(applying, "PROGRESS_SECONDS", 0.0)
    slow = approved(
        engine_world, app="ledger", tier="dev", cluster="sandbox", cpu="1", memory="2Gi"
    )
    _, slow_sql = provision_counting_queries(slow.pk)
    slow.refresh_from_db()
    assert slow.state == RequestState.READY
    waves = len(applying.apply_waves(reconcile.current_plan(slow).apply, lambda obj: obj))
    assert waves > 1
    assert steps_written(slow_sql) == waves + 1


def test_the_job_of_a_request_a_batch_already_finished_costs_one_query(
    engine_world, engine_sandbox
):
    first, second = approved_many(engine_world, 2)
    assert tasks.converge(first.pk) == "ready"

    with CaptureQueriesContext(connection) as captured:
        result = tasks.converge(second.pk)

    assert result == "nothing to do: request is ready"
    assert len(captured) == 1


def test_a_batch_costs_the_same_queries_whatever_its_size(engine_world, engine_sandbox):
    converge(approved(engine_world))  # the tenant's first request makes its own objects

    two = approved_many(engine_world, 2, prefix="two")
    two_count, two_sql = provision_counting_queries(two[0].pk)
    six = approved_many(engine_world, 6, prefix="six")
    six_count, six_sql = provision_counting_queries(six[0].pk)

    assert {Request.objects.get(pk=r.pk).state for r in (*two, *six)} == {RequestState.READY}
    # The plans' shared reads, the names and claims, the transitions, runs, outcomes and
    # versions are each one statement for the whole batch.
    assert six_count == two_count, "\n".join(six_sql)
