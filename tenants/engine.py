"""The provisioning engine, as the domain's pages and API see it.

The layering (docs/architecture.md): the engine (`provisioning`) reads the domain and reports
back through `tenants.services`; the domain never imports the engine. Pages and the API
still show what the engine would do: a request's plan and the digest an approval binds to,
the GitOps diff approval would push, what each role may do in a tier's namespaces. They ask
here; the engine plugs itself in when Django starts (`provisioning.apps`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ImproperlyConfigured

from tenants.choices import RequestState
from tenants.errors import PlanUnavailable, PreviewUnavailable
from tenants.models import Request, Tenant

# States in which the plan still describes the future (afterwards, the run records the past).
PLANNED_STATES = frozenset(
    {RequestState.SUBMITTED, RequestState.APPROVED, RequestState.FAILED, RequestState.PROVISIONING}
)


@dataclass(frozen=True)
class Engine:
    # The plan approval would apply (an object with `digest`, `apply`, `delete` and
    # `to_yaml()`); raises tenants.errors.PlanUnavailable.
    plan: Callable[[Request], Any]
    # The GitOps change approval would push; raises PreviewUnavailable.
    gitops_preview: Callable[[Request], GitOpsChange]
    # Per tier the tenant may use: what its owners, members, viewers and GitOps identity
    # may do there, in plain words.
    effective_permissions: Callable[[Tenant], list[dict]]
    # Can the tenant's repository be read with its credential (git ls-remote)?
    check_repository: Callable[[Tenant], RepositoryCheck]
    # Within it, each repository branch is fetched once for every preview (a page of many).
    one_read_per_repository: Callable[[], AbstractContextManager[None]]
    # Everything the tenant's plans give its groups and GitOps identities on every cluster
    # where it has live namespaces, read off the objects those plans apply.
    access_grants: Callable[[Tenant], list[Grant]]
    # Compare what the database says should exist for the tenant with its repository and
    # its clusters, and record it (tenants.models.TruthTable); returns the table.
    take_truth: Callable[[Tenant], dict]
    # What the current definitions would change in every active namespace (of a tier, by
    # id; None: every tier) and in those namespaces' tenants' repositories.
    campaign_changes: Callable[[int | None], CampaignChanges]
    # A tier's definition as plans see it: (digest, definition).
    tier_definition: Callable[[Any], tuple[str, dict]]
    # The digest of what this Berth's templates render (changes with a new version).
    bundle_digest: Callable[[], str]
    # The digest of the guardrails this Berth installs on a cluster: a cluster recording
    # another has outdated ones.
    guardrails_digest: Callable[[Any], str]


# Where a grant takes effect.
KUBERNETES, ARGOCD, KARGO, FLUX = "kubernetes", "argocd", "kargo", "flux"


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
class CampaignChanges:
    # [(namespace, {"desired", "before", "diff", "group"})]
    namespaces: list[tuple[Any, dict]]
    # [(tenant, cluster, {"diff", "paths"})]: what a tenant_sync commit would change
    repositories: list[tuple[Any, Any, dict]]


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


_connected: list[Engine] = []


def connect(engine: Engine) -> None:
    _connected[:] = [engine]


def _engine() -> Engine:
    if not _connected:
        raise ImproperlyConfigured(
            "No provisioning engine is connected: 'provisioning' must be in INSTALLED_APPS."
        )
    return _connected[0]


def plan(tenancy_request: Request) -> Any:
    return _engine().plan(tenancy_request)


def gitops_preview(tenancy_request: Request) -> GitOpsChange:
    return _engine().gitops_preview(tenancy_request)


def effective_permissions(tenant: Tenant) -> list[dict]:
    return _engine().effective_permissions(tenant)


def access_grants(tenant: Tenant) -> list[Grant]:
    return _engine().access_grants(tenant)


def take_truth(tenant: Tenant) -> dict:
    return _engine().take_truth(tenant)


def campaign_changes(tier_id: int | None) -> CampaignChanges:
    return _engine().campaign_changes(tier_id)


def tier_definition(tier: Any) -> tuple[str, dict]:
    return _engine().tier_definition(tier)


def bundle_digest() -> str:
    return _engine().bundle_digest()


def check_repository(tenant: Tenant) -> RepositoryCheck:
    return _engine().check_repository(tenant)


def one_read_per_repository() -> AbstractContextManager[None]:
    """`with engine.one_read_per_repository(): [review(r) for r in page]` reads each
    tenant's repository once for the whole page."""
    return _engine().one_read_per_repository()


def guardrails_digest(cluster: Any) -> str:
    return _engine().guardrails_digest(cluster)


def approval_digest(plan_digest: str, gitops_binds: str | None) -> str:
    """What an approval binds to: the plan's objects and the change to the tenant's
    repository (GitOpsChange.binds), as the approver saw them. None: the repository could
    not be read, and approving binds to that (once it can be read, the request comes back
    for approval)."""
    change = "(the repository could not be read)" if gitops_binds is None else gitops_binds
    return hashlib.sha256(f"{plan_digest}\n{change}".encode()).hexdigest()


@dataclass(frozen=True)
class Review:
    """A request as an approver sees it: the plan, the GitOps change, and the digest
    approving binds to ("" when there is no plan to approve)."""

    plan: Any = None
    plan_error: str = ""
    gitops_diff: str = ""
    gitops_error: str = ""
    digest: str = ""
    # The request's GitOps engines that cannot read the tenant's repository URL, one line
    # each (tenants.repository_readers): said before approval, not found at provisioning.
    repository_warnings: tuple[str, ...] = ()


def repository_warnings(tenancy_request: Request) -> tuple[str, ...]:
    """What the engines this request writes for (its project's, or the tenant's) cannot
    read of the tenant's repository URL."""
    from tenants.models import Project
    from tenants.repository_readers import unreadable

    tenant, payload = tenancy_request.tenant, tenancy_request.payload or {}
    engine_name = payload.get("engine")
    if not engine_name and payload.get("project"):
        engine_name = (
            Project.objects.filter(tenant=tenant, name=payload["project"])
            .values_list("gitops_engine", flat=True)
            .first()
        )
    return tuple(unreadable(engine_name or tenant.gitops_engine, tenant.gitops_repo_url))


def review(tenancy_request: Request) -> Review:
    """Renders the plan and reads the tenant's repository for the GitOps diff."""
    if tenancy_request.state not in PLANNED_STATES:
        return Review()
    warnings = repository_warnings(tenancy_request)
    try:
        planned = plan(tenancy_request)
    except PlanUnavailable as exc:
        return Review(plan_error=str(exc), repository_warnings=warnings)
    try:
        change = gitops_preview(tenancy_request)
    except PreviewUnavailable as exc:
        return Review(
            plan=planned,
            gitops_error=str(exc),
            digest=approval_digest(planned.digest, None),
            repository_warnings=warnings,
        )
    return Review(
        plan=planned,
        gitops_diff=change.diff,
        digest=approval_digest(planned.digest, change.binds),
        repository_warnings=warnings,
    )
