"""Provisioning's answers to the domain (`tenants.provisioner.Provisioner`): a request's plan,
the GitOps diff approval would push, what each role may do and the rights the access map
shows. Registered in provisioning.apps."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.core.exceptions import ObjectDoesNotExist

from provisioning import gitops, grants, jobs, reconcile
from provisioning.gitops import GitError
from provisioning.inputs import clusters_of, kept_input, shared_reads, tier_spec
from provisioning.jobs import campaigns
from provisioning.kube import KubeError
from provisioning.plan import Plan, render
from provisioning.reconcile import deploy_tokens
from provisioning.reconcile.guardrails import expected_digest
from provisioning.reconcile.proposals import gitops_remote
from provisioning.reconcile.pull_requests import forge_check, forge_report
from provisioning.versions import bundle_digest, tier_definition, tier_digest
from tenants.errors import PlanUnavailable, PreviewUnavailable
from tenants.models import Cluster, DeployToken, EnvironmentTier, Request, Tenant
from tenants.provisioner import (
    CampaignChanges,
    GitOpsChange,
    Grant,
    IssuedToken,
    PullReport,
    RepositoryCheck,
)


def plan(tenancy_request: Request) -> Plan:
    try:
        return reconcile.current_plan(tenancy_request)
    except ObjectDoesNotExist as exc:
        raise PlanUnavailable(f"The plan cannot be rendered: {exc}") from exc


def gitops_preview(tenancy_request: Request) -> GitOpsChange:
    try:
        return reconcile.gitops_preview(tenancy_request)
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


def access_grants(tenant: Tenant) -> list[Grant]:
    """Every right the tenant's plans give (provisioning.grants reads them off the objects),
    rendered with the code that provisions: as a tenant_sync would render them now, on every
    cluster where it has live namespaces."""
    found: list[Grant] = []
    for cluster in clusters_of(tenant):
        found += grants.grants_in(
            tenant.slug, cluster.name, render(kept_input(tenant, cluster)).apply
        )
    return found


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
    forge_problem = forge_check(tenant)
    if forge_problem:
        return RepositoryCheck(
            False, f"Berth can push to {where}, but not open its pull requests: {forge_problem}."
        )
    reviewed = (
        " Its changes open pull requests on the forge." if tenant.changes_by_pull_request else ""
    )
    return RepositoryCheck(True, f"{remote.url} answers and takes Berth's pushes: {at}.{reviewed}")


class Previews:
    """The provisioner the domain asks (tenants.provisioner.Provisioner). A page or an API
    call waits for its answers: git gets BERTH_GIT_WEB_TIMEOUT_SECONDS per command
    (`gitops.interactive`), not a worker's patience."""

    def plan(self, tenancy_request: Request) -> Plan:
        return plan(tenancy_request)

    def gitops_preview(self, tenancy_request: Request) -> GitOpsChange:
        with gitops.interactive():
            return gitops_preview(tenancy_request)

    def effective_permissions(self, tenant: Tenant) -> list[dict]:
        return grants.effective_permissions(tenant)

    def check_repository(self, tenant: Tenant) -> RepositoryCheck:
        return check_repository(tenant)

    def read_pull_request(self, tenant: Tenant, number: int) -> PullReport:
        return forge_report(tenant, number)

    @contextmanager
    def one_read_per_repository(self) -> Iterator[None]:
        # A page of reviews (the approval queue) reads alike what its plans share too: a
        # cluster, a tier, a tenant's claimed names, read once for the page.
        with gitops.one_fetch_per_branch(), shared_reads():
            yield

    def access_grants(self, tenant: Tenant) -> list[Grant]:
        return access_grants(tenant)

    def take_truth(self, tenant: Tenant) -> dict:
        with gitops.interactive():
            return jobs.take_truth(tenant)

    def campaign_changes(self, tier_id: int | None) -> CampaignChanges:
        with gitops.interactive():
            return campaign_changes(tier_id)

    def tier_definition(self, tier: EnvironmentTier) -> tuple[str, dict]:
        return tier_definition_of(tier)

    def bundle_digest(self) -> str:
        return bundle_digest()

    def guardrails_digest(self, cluster: Cluster) -> str:
        return expected_digest(cluster)

    def issue_deploy_token(self, token: DeployToken) -> IssuedToken:
        return deploy_tokens.issue(token)

    def remove_deploy_token(self, token: DeployToken) -> None:
        deploy_tokens.remove(token)
