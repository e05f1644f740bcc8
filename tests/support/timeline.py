"""Requests through a day, each step at its moment: the history the dashboard's figures and
the pages' pictures are computed from."""

import time_machine

from tenants.services.lifecycle import transition
from tests.support.workflow import ask_for_namespace


def at(moment, action):
    with time_machine.travel(moment, tick=False):
        return action()


def ask(world, app: str, tier: str = "prod"):
    return ask_for_namespace(
        world["tenant"], world["developer"], app=app, tier=tier, cpu="1", memory="1Gi"
    )


def provision(request_id: int, *, ready: bool, message: str = ""):
    transition(request_id=request_id, action="start_provisioning", actor=None)
    return transition(
        request_id=request_id,
        action="mark_ready" if ready else "mark_failed",
        actor=None,
        message=message,
    )
