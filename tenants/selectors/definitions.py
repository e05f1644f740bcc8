"""What a namespace runs: the revision of its tier's definition and of Berth's templates it
was last applied from, and whether either has changed since (an upgrade is due)."""

from __future__ import annotations

from dataclasses import dataclass

from tenants import provisioner
from tenants.models import EnvironmentTier, Namespace


@dataclass(frozen=True)
class Definition:
    tier: str
    version: int | None  # the tier revision it runs; None: not recorded
    bundle: int | None  # the templates' revision it runs
    behind: tuple[str, ...]  # why it is not current, in plain words; empty: current

    @property
    def label(self) -> str:
        tier = (
            f"{self.tier} v{self.version}"
            if self.version
            else f"{self.tier} (version not recorded)"
        )
        return f"{tier} · bundle v{self.bundle}" if self.bundle else tier


def definition_of(namespace: Namespace) -> Definition:
    """Reads nothing beyond the namespace's tier and revisions (select them with it)."""
    tier_revision, bundle_revision = namespace.tier_revision, namespace.bundle_revision
    behind = []
    if tier_revision is None:
        behind.append(
            "made before Berth recorded definitions: the next upgrade campaign "
            "of its tier records it"
        )
    elif tier_revision.digest != provisioner.tier_definition(namespace.tier)[0]:
        available = tier_version(namespace.tier)
        behind.append(
            f"the {namespace.tier.slug} tier's definition has changed since "
            f"v{tier_revision.number}" + (f": v{available} available" if available else "")
        )
    if bundle_revision is not None and bundle_revision.digest != provisioner.bundle_digest():
        behind.append(f"Berth's templates have changed since bundle v{bundle_revision.number}")
    return Definition(
        namespace.tier.slug,
        tier_revision.number if tier_revision else None,
        bundle_revision.number if bundle_revision else None,
        tuple(behind),
    )


def tier_version(tier: EnvironmentTier) -> int | None:
    """The number of the tier's definition as it stands; None until one is recorded (by a
    save in the admin, a run or a campaign). A definition seen before keeps its number."""
    digest = provisioner.tier_definition(tier)[0]
    # Through `revisions` so that a list prefetching them costs one query for all tiers.
    return max(
        (revision.number for revision in tier.revisions.all() if revision.digest == digest),
        default=None,
    )


def upgrades_available(namespaces: list[Namespace]) -> list[str]:
    """For each namespace behind its tier, in people's words: "payments-web-dev runs dev v1;
    v2 available". An upgrade, rolled out by a campaign: never drift. (Select `tier`,
    `tier_revision` and `bundle_revision` with the namespaces.)"""
    versions: dict[int, int | None] = {}
    found = []
    for namespace in namespaces:
        definition = definition_of(namespace)
        if not definition.behind or definition.version is None:
            continue
        if namespace.tier_id not in versions:
            versions[namespace.tier_id] = tier_version(namespace.tier)
        available = versions[namespace.tier_id]
        newer = f"v{available} available" if available else "a new definition is available"
        found.append(f"{namespace.name} runs {definition.tier} v{definition.version}; {newer}")
    return found
