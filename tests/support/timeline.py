"""Requests through a day, each step at its moment: the history the dashboard's figures and
the pages' pictures are computed from."""

import time_machine

from tenants import services
from tenants.services.lifecycle import transition


def at(moment, action):
    with time_machine.travel(moment, tick=False):
        return action()


def ask(world, app: str, tier: str = "prod"):
    return services.submit_request(
        tenant=world["tenant"],
        kind="namespace",
        requester=world["developer"],
        payload={"app": app, "tier": tier, "cluster": "sandbox", "cpu": "1", "memory": "1Gi"},
    )


def provision(request_id: int, *, ready: bool, message: str = ""):
    transition(request_id=request_id, action="start_provisioning", actor=None)
    return transition(
        request_id=request_id,
        action="mark_ready" if ready else "mark_failed",
        actor=None,
        message=message,
    )
