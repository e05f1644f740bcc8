"""A request that waits says why where people and programs look: its `status_message` (the
pages' status line, `berth get`, API clients that read only it) carries the reason, not only
`wait_reason`, which an empty status used to leave to those who knew to look for it."""

from __future__ import annotations

from provisioning import reconcile
from tenants.choices import RequestState
from tests.support.api import api
from tests.support.workflow import approve_if_needed, ask_for_namespace


def test_a_request_waiting_for_an_unreachable_cluster_says_why_in_its_status(demo_world, settings):
    settings.BERTH_OUTAGE_DEADLINE_SECONDS = 3600  # it waits, it does not fail yet
    made = ask_for_namespace(
        demo_world["tenant"], demo_world["developer"], app="shop", tier="dev", cpu="1", memory="1Gi"
    )
    approve_if_needed(made, approver=demo_world["admin"])

    reconcile.converge(request_id=made.pk, worker="waiting")  # the demo's cluster does not answer

    made.refresh_from_db()
    assert made.state == RequestState.PROVISIONING
    assert made.wait_reason.startswith("sandbox: cluster unreachable")
    assert made.status_message == f"Waiting: {made.wait_reason}"
    shown = api(demo_world["developer"]).get(f"/api/v1/requests/{made.pk}/").json()
    assert shown["status_message"] == made.status_message
