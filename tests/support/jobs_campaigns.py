"""What the tests of upgrade campaigns share (tests/provisioning/jobs/test_campaigns_*.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from provisioning import versions
from provisioning.gitops_plan import files as gitops_files
from provisioning.jobs import campaigns as engine_campaigns


def roll(campaign) -> str:
    """What the worker does with the campaign's task."""
    return engine_campaigns.roll(campaign.pk)


@contextmanager
def newer_applications(monkeypatch, change: Callable[[dict], None]) -> Iterator[None]:
    """Within it, Berth's templates write each Argo CD Application with `change` made to it,
    as a newer Berth's would: a campaign has files to write."""
    real = gitops_files.application

    def newer(inputs, ns):
        document = real(inputs, ns)
        change(document)
        return document

    monkeypatch.setattr(gitops_files, "application", newer)
    versions.bundle_digest.cache_clear()
    try:
        yield
    finally:
        monkeypatch.undo()
        versions.bundle_digest.cache_clear()


def annotated(application: dict) -> None:
    """The change of `newer_applications` most tests make: an annotation `berth.dev/new`."""
    application["metadata"]["annotations"] = {"berth.dev/new": "yes"}
