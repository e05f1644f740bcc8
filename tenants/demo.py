"""The demo world that `make run` seeds: tiers, a sandbox cluster, two tenants and their people.

Idempotent: running it again updates the same rows instead of adding new ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.db import transaction

from tenants.choices import GitOpsEngine, MembershipSource, NetworkPreset
from tenants.membership_sync import memberships_from_groups
from tenants.models import Cluster, EnvironmentTier, Membership, Tenant, User

PLATFORM_ADMIN_GROUP = "platform-admins"

TIERS = [
    dict(
        slug="dev",
        name="Development",
        position=10,
        default_cpu_millis=1000,
        default_memory_mib=2048,
        default_storage_gib=10,
        max_cpu_millis=4000,
        max_memory_mib=8192,
        max_storage_gib=50,
        network_preset=NetworkPreset.INGRESS,
        pod_security_level="baseline",
        owner_cluster_role="edit",
        member_cluster_role="edit",
        viewer_cluster_role="view",
        auto_repair_drift=True,
    ),
    dict(
        slug="staging",
        name="Staging",
        position=20,
        default_cpu_millis=2000,
        default_memory_mib=4096,
        default_storage_gib=20,
        max_cpu_millis=8000,
        max_memory_mib=16384,
        max_storage_gib=100,
        network_preset=NetworkPreset.INGRESS,
        pod_security_level="restricted",
        owner_cluster_role="edit",
        member_cluster_role="edit",
        viewer_cluster_role="view",
        auto_repair_drift=True,
    ),
    # Only the GitOps controller writes prod (the Morgridge model): people get `view`.
    dict(
        slug="prod",
        name="Production",
        position=30,
        default_cpu_millis=4000,
        default_memory_mib=8192,
        default_storage_gib=50,
        max_cpu_millis=16000,
        max_memory_mib=32768,
        max_storage_gib=500,
        network_preset=NetworkPreset.INGRESS,
        pod_security_level="restricted",
        owner_cluster_role="view",
        member_cluster_role="view",
        viewer_cluster_role="view",
        auto_repair_drift=False,
    ),
    dict(
        slug="review",
        name="Review app (ephemeral)",
        position=5,
        default_cpu_millis=500,
        default_memory_mib=1024,
        default_storage_gib=0,
        max_cpu_millis=2000,
        max_memory_mib=4096,
        max_storage_gib=10,
        network_preset=NetworkPreset.INGRESS,
        pod_security_level="restricted",
        owner_cluster_role="edit",
        member_cluster_role="edit",
        viewer_cluster_role="view",
        is_ephemeral=True,
        default_ttl=timedelta(days=2),
        max_ttl=timedelta(days=14),
        auto_repair_drift=True,
    ),
]


@dataclass(frozen=True)
class DemoPerson:
    username: str
    first_name: str
    last_name: str
    groups: tuple[str, ...]

    @property
    def email(self) -> str:
        return f"{self.username}@example.com"

    @property
    def subject(self) -> str:
        """The `sub` claim the development identity provider (portal.devidp) issues to them."""
        return f"devidp-{self.username}"


TENANTS = [
    dict(
        slug="payments",
        name="Payments team",
        owner_groups=["payments-owners"],
        member_groups=["payments-devs"],
        viewer_groups=["payments-auditors"],
        gitops_engine=GitOpsEngine.ARGOCD_KARGO,
        allowed_domains=["payments.example.com"],
    ),
    dict(
        slug="search",
        name="Search team",
        owner_groups=["search-owners"],
        member_groups=["search-devs"],
        viewer_groups=[],
        gitops_engine=GitOpsEngine.FLUX,
        allowed_domains=["search.example.com"],
    ),
]

PEOPLE = [
    DemoPerson("pat", "Pat", "Platform", (PLATFORM_ADMIN_GROUP,)),
    DemoPerson("olivia", "Olivia", "Owner", ("payments-owners",)),
    DemoPerson("dev", "Dana", "Developer", ("payments-devs",)),
    DemoPerson("sam", "Sam", "Searcher", ("search-devs",)),
]


@transaction.atomic
def seed(*, sandbox_api_url: str, repo_url_for: dict[str, str] | None = None) -> dict[str, int]:
    tiers = [EnvironmentTier.objects.update_or_create(slug=t["slug"], defaults=t)[0] for t in TIERS]
    cluster, _ = Cluster.objects.update_or_create(
        name="sandbox",
        defaults=dict(
            display_name="Sandbox (local Kubernetes API stand-in)",
            api_url=sandbox_api_url,
            is_sandbox=True,
            has_kargo=True,
            has_flux=True,
        ),
    )
    tenants = []
    for spec in TENANTS:
        defaults = dict(spec)
        if repo_url_for and spec["slug"] in repo_url_for:
            defaults["gitops_repo_url"] = repo_url_for[spec["slug"]]
        tenant, _ = Tenant.objects.update_or_create(slug=spec["slug"], defaults=defaults)
        tenant.allowed_clusters.set([cluster])
        tenant.allowed_tiers.set(tiers)
        tenants.append(tenant)

    for person in PEOPLE:
        user, created = User.objects.update_or_create(
            username=person.username,
            defaults=dict(
                first_name=person.first_name,
                last_name=person.last_name,
                email=person.email,
                oidc_subject=person.subject,
                is_platform_admin=PLATFORM_ADMIN_GROUP in person.groups,
            ),
        )
        if created:  # demo people sign in through the identity provider, never a password
            user.set_unusable_password()
            user.save(update_fields=["password"])
        for tenant, role in memberships_from_groups(tenants, person.groups).items():
            Membership.objects.update_or_create(
                user=user,
                tenant=tenant,
                defaults={"role": role, "source": MembershipSource.OIDC},
            )
    return {"tiers": len(tiers), "tenants": len(tenants), "people": len(PEOPLE)}
