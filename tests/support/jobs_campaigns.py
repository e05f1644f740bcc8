"""What the tests of upgrade campaigns share (tests/provisioning/jobs/test_campaigns_*.py)."""

from __future__ import annotations

from provisioning.jobs import campaigns as engine_campaigns


def roll(campaign) -> str:
    """What the worker does with the campaign's task."""
    return engine_campaigns.roll(campaign.pk)
