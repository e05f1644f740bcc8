"""Celery's broker without a server, and beat's schedule.

Without REDIS_URL, kombu's filesystem transport lets a real worker process run jobs with
no broker server (the development default and how a newcomer first runs things).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from celery.schedules import crontab


def filesystem_broker_options(broker_dir: Path) -> dict[str, Any]:
    """kombu's filesystem transport, queueing in files under `broker_dir`."""
    return {
        "data_folder_in": str(broker_dir / "queue"),
        "data_folder_out": str(broker_dir / "queue"),
        "control_folder": str(broker_dir / "control"),
        "store_processed": False,
        # The folder is polled; kombu's default second between looks is most of an
        # approval's wait for Ready on this stack.
        "polling_interval": 0.05,
    }


def beat_schedule(*, sweep: float, reconcile: float, expiry: float) -> dict[str, Any]:
    """Beat's periodic tasks, each interval in seconds (or a crontab: once a day)."""
    return {
        "heartbeat": {"task": "provisioning.heartbeat", "schedule": 60.0},
        "sweep": {"task": "provisioning.sweep", "schedule": sweep},
        "reconcile": {"task": "provisioning.reconcile", "schedule": reconcile},
        "truth": {"task": "provisioning.truth", "schedule": reconcile},
        # Budget alerts: each tenant's month's cost and quota use against its thresholds.
        "budget-alerts": {"task": "tenants.check_budget_alerts", "schedule": 900.0},
        "expire": {"task": "tenants.expire_environments", "schedule": expiry},
        # Removes the ServiceAccounts of deploy tokens that expired or were revoked.
        "deploy-tokens": {"task": "tenants.remove_spent_deploy_tokens", "schedule": expiry},
        "access-grants": {"task": "tenants.end_unentitled_grants", "schedule": expiry},
        # Yesterday's measured usage per namespace, once its last samples are in (showback).
        "usage": {"task": "tenants.collect_usage", "schedule": crontab(minute=30, hour=0)},
        # Closes the months that are over (showback): a no-op but for the first hour of one.
        "close-months": {"task": "tenants.close_months", "schedule": 3600.0},
    }
