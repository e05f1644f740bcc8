"""Numbering what namespaces are rendered from: each new digest of a tier's definition or of
Berth's templates becomes the next revision. Recorded when a tier is saved in the admin,
when a run applies a namespace and when a campaign is planned, so whichever comes first
after a change gives it its number."""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.db.models import Max

from tenants import provisioner
from tenants.models import BundleRevision, EnvironmentTier, TierRevision


def tier_revision(*, tier: EnvironmentTier, digest: str, definition: dict) -> TierRevision:
    """The tier's revision with this digest, else a new one. A namespace rolled back to v1
    and applied again runs v1, not a copy of it numbered v3."""
    with transaction.atomic():
        EnvironmentTier.objects.select_for_update().filter(pk=tier.pk).first()
        revisions = TierRevision.objects.filter(tier=tier).order_by("-number")
        same = revisions.filter(digest=digest).first()
        if same is not None:
            return same
        latest = revisions.first()
        return TierRevision.objects.create(
            tier=tier,
            number=(latest.number if latest else 0) + 1,
            digest=digest,
            definition=definition,
        )


def tier_revisions(*, wanted: dict[EnvironmentTier, tuple[str, dict]]) -> dict[int, TierRevision]:
    """Tier id -> its revision with the wanted (digest, definition); one query when every
    digest is already numbered, as it is on all but the first run after a change."""
    known: dict[tuple[int, str], TierRevision] = {}
    for revision in TierRevision.objects.filter(
        tier__in=list(wanted), digest__in={digest for digest, _ in wanted.values()}
    ).order_by("tier", "-number"):
        known.setdefault((revision.tier_id, revision.digest), revision)
    found = {}
    for tier, (digest, definition) in wanted.items():
        found[tier.pk] = known.get((tier.pk, digest)) or tier_revision(
            tier=tier, digest=digest, definition=definition
        )
    return found


def current_tier_revision(*, tier: EnvironmentTier) -> TierRevision:
    digest, definition = provisioner.tier_definition(tier)
    return tier_revision(tier=tier, digest=digest, definition=definition)


def bundle_revision(*, digest: str) -> BundleRevision:
    """The templates' revision with this digest, numbered when first seen. Two workers
    meeting a new version at once: the second finds the first's row."""
    for _ in range(3):  # old and new workers side by side may race for one number
        found = BundleRevision.objects.filter(digest=digest).first()
        if found is not None:
            return found
        try:
            with transaction.atomic():
                top = BundleRevision.objects.aggregate(top=Max("number"))["top"] or 0
                return BundleRevision.objects.create(number=top + 1, digest=digest)
        except IntegrityError:
            continue
    return BundleRevision.objects.get(digest=digest)


def current_bundle_revision() -> BundleRevision:
    return bundle_revision(digest=provisioner.bundle_digest())
