"""The provisioner: what the domain asks of provisioning, as a port.

The layering (docs/architecture.md): provisioning reads the domain and reports back through
`tenants.services`; the domain never imports it. Pages and the API still show what
provisioning would do: a request's plan, the GitOps change approval would push, what each
role may do in a tier's namespaces. They ask here, through the functions below;
`provisioning` registers its implementation of `Provisioner` when Django starts
(`provisioning.apps`). What an approval binds to is the domain's own rule, computed from
these answers (`tenants.selectors.reviews`).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from django.core.exceptions import ImproperlyConfigured

from tenants.choices import RequestState

if TYPE_CHECKING:
    from tenants.models import (
        Cluster,
        DeployToken,
        EnvironmentTier,
        Namespace,
        Request,
        Tenant,
    )

# States in which the plan still describes the future (afterwards, the run records the past).
PLANNED_STATES = frozenset(
    {RequestState.SUBMITTED, RequestState.APPROVED, RequestState.FAILED, RequestState.PROVISIONING}
)

# Where a grant takes effect.
KUBERNETES, ARGOCD, KARGO, FLUX = "kubernetes", "argocd", "kargo", "flux"


class PlanView(Protocol):
    """A request's plan as the domain reads it (provisioning.plan.Plan)."""

    @property
    def digest(self) -> str: ...

    @property
    def apply(self) -> Sequence[dict[str, Any]]: ...

    @property
    def delete(self) -> Sequence[Any]: ...

    def redacted(self) -> Sequence[dict[str, Any]]: ...

    def to_yaml(self) -> str: ...


@dataclass(frozen=True)
class Grant:
    """One right a plan object gives: `group` (an OIDC group; "" for a GitOps identity,
    then named by `identity`) may do `summary` in `namespace` of `cluster`, through `obj`."""

    tenant: str
    cluster: str
    system: str  # KUBERNETES, ARGOCD, KARGO or FLUX
    group: str
    tenant_role: str  # owner, member, viewer; "" for a GitOps identity
    namespace: str
    obj: str  # the object that grants it: "RoleBinding shop-dev/berth-members"
    role: str  # the ClusterRole, Argo CD project role or Kargo ServiceAccount
    summary: str  # in plain words
    verbs: str = ""  # counted from the role's rules, where Berth ships the role
    identity: str = ""  # for a GitOps identity: the ServiceAccount it acts as


@dataclass(frozen=True)
class PullReport:
    """A pull request as the tenant's forge itself answers for it, read with Berth's token."""

    state: str  # open | merged | closed | gone (the forge does not know it)
    branch: str = ""
    merged_by: str = ""
    merge_sha: str = ""
    closed_by: str = ""


@dataclass(frozen=True)
class CampaignChanges:
    # [(namespace, {"desired", "before", "diff", "group"})]
    namespaces: list[tuple[Namespace, dict[str, Any]]]
    # [(tenant, cluster, {"diff", "paths"})]: what a tenant_sync commit would change
    repositories: list[tuple[Tenant, Cluster, dict[str, Any]]]


@dataclass(frozen=True)
class GitOpsChange:
    diff: str  # what approval would commit, as a unified diff against the branch
    # What of it an approval binds to: the diff of the request's own application files and
    # the lines it adds to or removes from the cluster's index (the index itself is shared:
    # other applications' commits move its other lines without changing this request).
    binds: str = ""


@dataclass(frozen=True)
class RepositoryCheck:
    ok: bool
    message: str


@dataclass(frozen=True)
class IssuedToken:
    """A token the cluster issued for a deploy token's ServiceAccount (never stored)."""

    token: str
    expires_at: datetime
    audiences: tuple[str, ...] = ()  # as the API server set them


class Provisioner(Protocol):
    """What the domain asks of provisioning. Errors it may raise are the domain's
    (tenants.errors), never provisioning's own."""

    def plan(self, tenancy_request: Request) -> PlanView:
        """The plan approval would apply; raises PlanUnavailable."""
        ...

    def gitops_preview(self, tenancy_request: Request) -> GitOpsChange:
        """The GitOps change approval would push; raises PreviewUnavailable."""
        ...

    def effective_permissions(self, tenant: Tenant) -> list[dict[str, Any]]:
        """Per tier the tenant may use: what its owners, members, viewers and GitOps
        identity may do there, in plain words."""
        ...

    def check_repository(self, tenant: Tenant) -> RepositoryCheck:
        """Can the tenant's repository be read, and pushed to, with its credential?"""
        ...

    def read_pull_request(self, tenant: Tenant, number: int) -> PullReport:
        """The tenant's pull request `number` as its forge says it is now; raises
        ForgeUnavailable."""
        ...

    def one_read_per_repository(self) -> AbstractContextManager[None]:
        """Within it, each repository branch is fetched once for every preview."""
        ...

    def access_grants(self, tenant: Tenant) -> list[Grant]:
        """Everything the tenant's plans give its groups and GitOps identities on every
        cluster where it has live namespaces, read off the objects those plans apply."""
        ...

    def take_truth(self, tenant: Tenant) -> dict[str, Any]:
        """Compare what the database says should exist for the tenant with its repository
        and its clusters, and record it (tenants.models.TruthTable); returns the table."""
        ...

    def campaign_changes(self, tier_id: int | None) -> CampaignChanges:
        """What the current definitions would change in every active namespace (of a tier,
        by id; None: every tier) and in those namespaces' tenants' repositories; raises
        PreviewUnavailable."""
        ...

    def tier_definition(self, tier: EnvironmentTier) -> tuple[str, dict[str, Any]]:
        """A tier's definition as plans see it: (digest, definition)."""
        ...

    def bundle_digest(self) -> str:
        """The digest of what this Berth's templates render (changes with a new version)."""
        ...

    def guardrails_digest(self, cluster: Cluster) -> str:
        """The digest of the guardrails this Berth installs on a cluster: a cluster
        recording another has outdated ones."""
        ...

    def issue_deploy_token(self, token: DeployToken) -> IssuedToken:
        """Create the token's ServiceAccount and its binding in its namespace and ask the
        cluster for a token of it; raises ClusterUnavailable."""
        ...

    def remove_deploy_token(self, token: DeployToken) -> None:
        """Remove the token's binding and ServiceAccount (gone already is fine); raises
        ClusterUnavailable."""
        ...


_registered: list[Provisioner] = []


def register(implementation: Provisioner) -> None:
    _registered[:] = [implementation]


def provisioner() -> Provisioner:
    if not _registered:
        raise ImproperlyConfigured(
            "No provisioner is registered: 'provisioning' must be in INSTALLED_APPS."
        )
    return _registered[0]


def plan(tenancy_request: Request) -> PlanView:
    return provisioner().plan(tenancy_request)


def gitops_preview(tenancy_request: Request) -> GitOpsChange:
    return provisioner().gitops_preview(tenancy_request)


def effective_permissions(tenant: Tenant) -> list[dict[str, Any]]:
    return provisioner().effective_permissions(tenant)


def access_grants(tenant: Tenant) -> list[Grant]:
    return provisioner().access_grants(tenant)


def take_truth(tenant: Tenant) -> dict[str, Any]:
    return provisioner().take_truth(tenant)


def campaign_changes(tier_id: int | None) -> CampaignChanges:
    return provisioner().campaign_changes(tier_id)


def tier_definition(tier: EnvironmentTier) -> tuple[str, dict[str, Any]]:
    return provisioner().tier_definition(tier)


def bundle_digest() -> str:
    return provisioner().bundle_digest()


def check_repository(tenant: Tenant) -> RepositoryCheck:
    return provisioner().check_repository(tenant)


def read_pull_request(tenant: Tenant, number: int) -> PullReport:
    return provisioner().read_pull_request(tenant, number)


def one_read_per_repository() -> AbstractContextManager[None]:
    """`with provisioner.one_read_per_repository(): [review(r) for r in page]` reads each
    tenant's repository once for the whole page."""
    return provisioner().one_read_per_repository()


def guardrails_digest(cluster: Cluster) -> str:
    return provisioner().guardrails_digest(cluster)


def issue_deploy_token(token: DeployToken) -> IssuedToken:
    return provisioner().issue_deploy_token(token)


def remove_deploy_token(token: DeployToken) -> None:
    provisioner().remove_deploy_token(token)
