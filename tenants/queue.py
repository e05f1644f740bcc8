"""Queueing work for a worker from a page, the API or the engine, without failing the caller
when the broker is down."""

from __future__ import annotations

import logging

logger = logging.getLogger(__name__)


def enqueue(task, *args: object) -> bool:
    """Queue a task; when the broker is down, say so and go on: whatever was saved stays
    saved (the database is the truth), and the work is found again by the sweep (requests)
    or lost with a warning (a notification), never turned into an error page."""
    try:
        task.delay(*args)
    except Exception as error:
        logger.warning("broker unavailable, %s not queued (%s)", task.name, type(error).__name__)
        return False
    return True
