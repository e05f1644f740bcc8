"""The engine's answers to the domain's pages (tenants.engine): a request's plan, the GitOps
diff approval would push, and what each role may do. Connected in provisioning.apps."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from django.core.exceptions import ObjectDoesNotExist

from provisioning import access, engine, gitops
from provisioning.engine import campaigns
from provisioning.engine.commits import gitops_remote
from provisioning.engine.guardrails import expected_digest
from provisioning.gitops import GitError
from provisioning.inputs import tier_spec
from provisioning.kube import KubeError
from provisioning.plan import Plan
from provisioning.versions import bundle_digest, tier_definition, tier_digest
from tenants.engine import CampaignChanges, Engine, GitOpsChange, RepositoryCheck
from tenants.errors import PlanUnavailable, PreviewUnavailable
from tenants.models import EnvironmentTier, Request, Tenant

T = TypeVar("T")


def plan(tenancy_request: Request) -> Plan:
    try:
        return engine.current_plan(tenancy_request)
    except ObjectDoesNotExist as exc:
        raise PlanUnavailable(f"The plan cannot be rendered: {exc}") from exc


def gitops_preview(tenancy_request: Request) -> GitOpsChange:
    try:
        return engine.gitops_preview(tenancy_request)
    except GitError as exc:
        raise PreviewUnavailable(f"The tenant's repository could not be read: {exc}") from exc


def campaign_changes(tier_id: int | None) -> CampaignChanges:
    try:
        return campaigns.campaign_changes(tier_id)
    except KubeError as exc:
        raise PreviewUnavailable(
            f"The diffs cannot be computed: a cluster could not be read: {exc.message}"
        ) from exc
    except GitError as exc:
        raise PreviewUnavailable(
            f"The diffs cannot be computed: a tenant's repository could not be read: {exc.message}"
        ) from exc


def tier_definition_of(tier: EnvironmentTier) -> tuple[str, dict]:
    spec = tier_spec(tier)
    return tier_digest(spec), tier_definition(spec)


def check_repository(tenant: Tenant) -> RepositoryCheck:
    """Can Berth write the tenant's repository with its credential (and so its engines read
    it)? `git ls-remote` of its branch, then an empty commit pushed to a throwaway ref and
    deleted again (a read-only credential passes the first and not the second), with the
    short timeout of a question someone waits on (a worker runs it:
    tenants.tasks.check_repository), and only if the repository's host is one Berth may
    connect to (tenants.egress)."""
    if not tenant.gitops_repo_url.strip():
        return RepositoryCheck(True, "No GitOps repository is configured: nothing to read.")
    where = gitops.display_url(tenant.gitops_repo_url)
    try:
        remote = gitops_remote(tenant)
        with gitops.interactive():
            head = gitops.probe(remote)
    except GitError as exc:
        return RepositoryCheck(False, f"Berth could not read {where}: {exc.message}")
    try:
        with gitops.interactive():
            gitops.probe_write(remote)
    except GitError as exc:
        return RepositoryCheck(
            False,
            f"Berth can read {where} but cannot push to it (its "
            f"credential must be allowed to write): {exc.message}",
        )
    at = (
        f"{remote.branch} is at {head[:12]}"
        if head
        else f"it has no branch {remote.branch} yet: Berth creates it with its first commit"
    )
    return RepositoryCheck(True, f"{remote.url} answers and takes Berth's pushes: {at}.")


def _interactive(answer: Callable[..., T]) -> Callable[..., T]:
    """A page or an API call waits for this answer: git gets BERTH_GIT_WEB_TIMEOUT_SECONDS
    per command, not a worker's patience."""

    @functools.wraps(answer)
    def waited_for(*args: Any) -> T:
        with gitops.interactive():
            return answer(*args)

    return waited_for


ENGINE = Engine(
    plan=plan,
    gitops_preview=_interactive(gitops_preview),
    effective_permissions=access.effective_permissions,
    check_repository=check_repository,
    one_read_per_repository=gitops.one_fetch_per_branch,
    access_grants=engine.access_grants,
    take_truth=_interactive(engine.take_truth),
    campaign_changes=_interactive(campaign_changes),
    tier_definition=tier_definition_of,
    bundle_digest=bundle_digest,
    guardrails_digest=expected_digest,
)
