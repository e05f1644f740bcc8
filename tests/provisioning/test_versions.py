"""The digests a namespace's recorded versions are compared with: a tier's definition as
plans see it, and what Berth's templates render (cluster objects and GitOps files)."""

from __future__ import annotations

import dataclasses

from provisioning import versions
from provisioning.plan import TierSpec

ROLES = {"owner": "berth-tenant-edit", "member": "berth-tenant-edit", "viewer": "berth-tenant-view"}
DEV = TierSpec("dev", "baseline", "isolated", 500, 512, 100, 128, ROLES)


def test_a_tier_digest_changes_with_any_field_plans_read_and_only_then():
    assert versions.tier_digest(DEV) == versions.tier_digest(dataclasses.replace(DEV))
    for change in (
        {"pod_security_level": "restricted"},
        {"network_preset": "ingress"},
        {"container_default_memory_mib": 768},
        {"position": 2},
        {"cluster_roles": {**ROLES, "viewer": "view"}},
    ):
        assert versions.tier_digest(dataclasses.replace(DEV, **change)) != versions.tier_digest(
            DEV
        ), change


def test_the_bundle_digest_follows_what_the_templates_render(monkeypatch):
    before = versions.bundle_digest()
    assert versions.bundle_digest() == before  # deterministic
    real = versions.render_files

    def one_more_line(inputs):  # a template that now writes one more line
        return {path: content + "# new\n" for path, content in real(inputs).items()}

    monkeypatch.setattr(versions, "render_files", one_more_line)
    versions.bundle_digest.cache_clear()
    try:
        assert versions.bundle_digest() != before
    finally:
        monkeypatch.undo()
        versions.bundle_digest.cache_clear()
    assert versions.bundle_digest() == before
