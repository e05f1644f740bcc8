"""The test hooks under ``/_sandbox/`` (admins only): faults, the request log, reset."""

from __future__ import annotations

from . import bodies
from .errors import status_body
from .sandboxview import Sandbox


def control(
    sandbox: Sandbox, method: str, path: str, body: bytes, content_type: str | None
) -> tuple[int, dict]:
    action = (method, path.removeprefix("/_sandbox"))
    if action == ("GET", "/faults"):
        return 200, {"items": sandbox.faults.pending()}
    if action == ("POST", "/faults"):
        spec = bodies.parse(body, content_type, allow_empty=True) or {}
        try:
            fault = sandbox.inject_faults(**spec)
        except (TypeError, ValueError) as error:
            return 400, status_body(400, f"invalid fault: {error}")
        return 201, fault
    if action == ("DELETE", "/faults"):
        sandbox.clear_faults()
        return 200, {"items": []}
    if action == ("GET", "/requests"):
        # `items`: the last REQUEST_LOG_SIZE requests; `total`: all of them, ever.
        return 200, {"items": sandbox.requests(), "total": sandbox.requests_total()}
    if action == ("DELETE", "/requests"):
        sandbox.clear_requests()
        return 200, {"items": []}
    if action == ("POST", "/reset"):
        sandbox.reset()
        return 200, status_body(200, "sandbox reset")
    return 404, status_body(404, f"no sandbox hook {method} {path}")
