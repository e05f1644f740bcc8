"""Upgrading to showback's history: namespaces held before it was kept get an allocation
from their creation at their quota; prices set before get a date since always; a namespace
still waiting, and one already gone with no recorded end, get none."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("tenants", "0031_conditions")]
AFTER = [("tenants", "0032_showback_history")]
MADE = datetime(2026, 10, 5, 8, 30, tzinfo=UTC)


@pytest.mark.django_db(transaction=True)
def test_the_upgrade_gives_held_namespaces_their_history_and_prices_a_date():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    tenant = old.get_model("tenants", "Tenant").objects.create(slug="payments", name="Payments")
    cluster = old.get_model("tenants", "Cluster").objects.create(name="sandbox")
    tier = old.get_model("tenants", "EnvironmentTier").objects.create(
        slug="dev", name="Dev", position=1
    )
    old.get_model("tenants", "ClusterPrice").objects.create(cluster=cluster, cpu_core_hour="0.04")
    Namespace = old.get_model("tenants", "Namespace")
    for name, state in [
        ("payments-live-dev", "active"),
        ("payments-going-dev", "decommissioning"),
        ("payments-wait-dev", "requested"),
        ("payments-gone-dev", "decommissioned"),
    ]:
        made = Namespace.objects.create(
            name=name,
            tenant=tenant,
            cluster=cluster,
            tier=tier,
            cpu_millis=1500,
            memory_mib=2048,
            storage_gib=3,
            state=state,
        )
        Namespace.objects.filter(pk=made.pk).update(created_at=MADE)

    executor = MigrationExecutor(connection)
    executor.migrate(AFTER)
    new = executor.loader.project_state(AFTER).apps
    held = {
        each.namespace.name: each
        for each in new.get_model("tenants", "Allocation").objects.select_related("namespace")
    }
    [price] = new.get_model("tenants", "ClusterPrice").objects.all()

    assert set(held) == {"payments-live-dev", "payments-going-dev"}
    live = held["payments-live-dev"]
    assert (live.started_at, live.ended_at, live.started_by) == (MADE, None, "ready")
    assert (live.cpu_millis, live.memory_mib, live.storage_gib) == (1500, 2048, 3)
    assert price.effective_from == datetime(1970, 1, 1, tzinfo=UTC)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())
