"""Merge-request mode: a request whose tenant or tier wants its changes reviewed writes its
commit to a branch of its own, `berth/request-<id>`, and opens a pull request on the forge
with the plan's summary and a link back; its run waits (state Awaiting merge) until the forge
says. Merged, the run goes on where it waited: the cluster side after the merge. Closed
unmerged, the request is back with its requester (tenants.services.pull_requests). A base
branch that moved underneath is rendered again and the branch force-pushed (a rebase), or
the pull request says why it could not be. Webhooks tell first; `poll_pull_requests` (beat,
through the sweep) asks the forge about the requests still waiting, and only those."""

from __future__ import annotations

import logging

from django.conf import settings

from provisioning import gitops, gitops_plan
from provisioning.gitops.forge import (
    Forge,
    ForgeError,
    PullState,
    may_write,
    open_pull,
    read_pull,
    repository_of,
)
from provisioning.inputs import plan_input_for
from provisioning.inputs.kinds import plan_kind_for
from provisioning.models import GitCommit
from provisioning.plan import PlanInput
from provisioning.reconcile.batches import Item
from provisioning.reconcile.commits import request_proposer, writes_a_repository
from provisioning.reconcile.git_step import GITOPS_DONE, GitFailure, git_failure
from provisioning.reconcile.proposals import gitops_remote
from provisioning.records import pull_requests as records
from provisioning.records import run_steps
from tenants import services
from tenants.choices import PullRequestState, RequestState
from tenants.conditions import Outcome, Reason, waiting
from tenants.errors import ForgeUnavailable
from tenants.models import EnvironmentTier, Namespace, PullRequest, Request, Tenant
from tenants.provisioner import PullReport

logger = logging.getLogger(__name__)

PROPOSED = "proposed"  # the GitOps step's outcome while its pull request is open


def branch_of(tenancy_request: Request) -> str:
    return f"berth/request-{tenancy_request.pk}"


def tier_settings() -> dict[str, bool]:
    """The tiers whose own setting wins over their tenants': slug → pull request or not."""
    return dict(
        EnvironmentTier.objects.exclude(changes_by_pull_request=None).values_list(
            "slug", "changes_by_pull_request"
        )
    )


def reviewed(namespace: Namespace) -> bool:
    """Whether a change of this namespace's desired state reaches its tenant's repository
    through a pull request (its tier's setting, else its tenant's): then its cluster
    changes only after the merge."""
    tenant = namespace.tenant
    if not tenant.gitops_repo_url.strip():
        return False
    own = namespace.tier.changes_by_pull_request
    return tenant.changes_by_pull_request if own is None else own


def wants_pull_request(
    tenancy_request: Request, inputs: PlanInput, tiers: dict[str, bool] | None = None
) -> bool:
    """Whether the request's change reaches the repository through a pull request: where a
    tier it touches says so, that tier's setting; else the tenant's. One tier that wants a
    review is enough. `tiers`: `tier_settings()`, when at hand."""
    if not writes_a_repository(tenancy_request):
        return False
    tenant = tenancy_request.tenant
    tiers = tier_settings() if tiers is None else tiers
    slugs = {spec.tier.slug for spec in inputs.namespaces}
    if inputs.remove_namespaces:
        slugs |= set(
            Namespace.objects.filter(tenant=tenant, name__in=inputs.remove_namespaces).values_list(
                "tier__slug", flat=True
            )
        )
    wanted = [tiers.get(slug, tenant.changes_by_pull_request) for slug in slugs]
    return any(wanted or [tenant.changes_by_pull_request])


def forge_of(tenant: Tenant) -> Forge:
    """The tenant's forge; ForgeError when it has none Berth can use."""
    problem = Tenant(
        **{
            field: getattr(tenant, field)
            for field in ("gitops_repo_url", "forge_kind", "forge_api_url", "forge_token")
        },
        changes_by_pull_request=True,
    ).forge_problem()
    if problem:
        raise ForgeError(
            f"this change needs a pull request, but tenant {tenant.slug}'s forge is not "
            f"set up: {' '.join(problem.values())}",
            transient=False,
        )
    return Forge(
        api_url=tenant.forge_api_url,
        repository=repository_of(tenant.gitops_repo_url),
        token=tenant.forge_token,
        kind=tenant.forge_kind,
    )


def forge_check(tenant: Tenant) -> str | None:
    """For a tenant in merge-request mode, why Berth could not open its pull requests
    (None: it can, or the tenant pushes directly): the forge's own word on the token's
    permissions, asked at onboarding and after each change of the forge's settings."""
    if not tenant.changes_by_pull_request:
        return None
    try:
        forge = forge_of(tenant)
        if not may_write(forge):
            return (
                f"the forge's token may not write {forge.repository}, so Berth cannot open "
                "pull requests there: give it write access"
            )
    except ForgeError as error:
        return error.message
    return None


def forge_report(tenant: Tenant, number: int) -> PullReport:
    """The pull request as the tenant's forge answers for it now (what a webhook claims is
    acted on only once the forge says so itself). Raises ForgeUnavailable."""
    try:
        pull = read_pull(forge_of(tenant), number)
    except ForgeError as error:
        if error.status == 404:
            return PullReport(state="gone")
        raise ForgeUnavailable(error.message) from None
    return PullReport(
        state=pull.state,
        branch=pull.branch,
        merged_by=pull.merged_by,
        merge_sha=pull.merge_sha,
        closed_by=pull.closed_by,
    )


def propose_first(items: list[Item]) -> tuple[list[Item], dict[int, Outcome | GitFailure]]:
    """The items whose change waits for a review go to a pull request before anything
    else of their run: nothing reaches the cluster before the merge. Returns the items that
    go on now (pushing directly, or merged), and what happened to the others: awaiting
    merge, or why their pull request could not be opened."""
    going: list[Item] = []
    held: dict[int, Outcome | GitFailure] = {}
    tiers = tier_settings()  # one query for the batch
    for item in items:
        step = item.run.steps[item.git_index]
        if step["outcome"] in GITOPS_DONE or not wants_pull_request(
            item.request, item.inputs, tiers
        ):
            going.append(item)
            continue
        try:
            outcome, message = _through_pull_request(item)
        except (gitops.GitError, ForgeError, ValueError) as error:
            held[item.pk] = git_failure(item.request, item.run, item.git_index, error)
            continue
        run_steps.record_step(
            run=item.run, index=item.git_index, outcome=outcome, attempts=1, message=message
        )
        if outcome == PROPOSED:
            services.await_merge(request_id=item.pk, message=message[:1].upper() + message[1:])
            held[item.pk] = waiting(Reason.AWAITING_MERGE, f"awaiting merge: {message}")
        else:
            going.append(item)
    return going, held


def _through_pull_request(item: Item) -> tuple[str, str]:
    """The request's pull request: opened (its branch pushed) unless it is already, or
    found merged. (outcome, message) for its GitOps step."""
    row = PullRequest.objects.filter(request=item.request).first()
    if row is not None and row.state == PullRequestState.MERGED:
        records.record_merged_commit(row=row)
        by = f" by {row.merged_by}" if row.merged_by else ""
        return "committed", f"pull request #{row.number} merged{by} into {row.base}: {row.url}"
    if row is not None and row.state == PullRequestState.OPEN:
        return PROPOSED, f"pull request #{row.number} awaits a merge: {row.url}"
    tenant = item.request.tenant
    forge = forge_of(tenant)
    remote = gitops_remote(tenant)
    branch = branch_of(item.request)
    written = gitops.write_branch(
        remote, branch, request_proposer(item.request, item.inputs, remote)
    )
    if written.outcome == "unchanged":
        return "unchanged", f"{remote.branch} already holds these files: nothing to review"
    pull = open_pull(
        forge,
        head=branch,
        base=remote.branch,
        title=_title(item.request),
        body=_body(item.request, written.proposal),
    )
    records.record_opened(
        tenancy_request=item.request,
        repository=forge.repository,
        pull=pull,
        branch=branch,
        base=remote.branch,
        base_sha=written.base,
        commit=_commit(item.request, remote, branch, written),
    )
    return PROPOSED, f"pull request #{pull.number} opened for review: {pull.url}"


def _title(tenancy_request: Request) -> str:
    label = plan_kind_for(tenancy_request.kind).value.label
    return f"Berth request #{tenancy_request.pk}: {label} for {tenancy_request.tenant.slug}"


def _body(tenancy_request: Request, proposal: gitops.Proposal) -> str:
    link = f"{settings.BERTH_BASE_URL.rstrip('/')}/requests/{tenancy_request.pk}/"
    changed = gitops_plan.changes(proposal.current, proposal.files)
    files = "\n".join(f"- `{path}` {how}" for path, how in sorted(changed.items()))
    return (
        f"Berth opened this pull request for request #{tenancy_request.pk}: {link}\n\n"
        "Merging it lets the request go on; closing it sends the request back to its "
        f"requester.\n\n## Files\n\n{files}\n\n## Commit\n\n```\n{proposal.message}\n```\n"
    )


def _commit(
    tenancy_request: Request, remote: gitops.Remote, branch: str, written: gitops.WriteResult
) -> GitCommit:
    proposal = written.proposal
    return GitCommit(
        request=tenancy_request,
        repo_url=remote.url,
        branch=branch,
        sha=written.sha,
        message=proposal.message,
        diff=gitops_plan.diff_files(proposal.current, proposal.files),
        files=gitops_plan.changes(proposal.current, proposal.files),
        pushes=written.pushes,
    )


def poll_pull_requests() -> dict[int, str]:
    """Ask the forge about every request awaiting a merge (and nothing else): merged ones
    go on, closed ones go back to their requester, open ones whose base moved are rendered
    again on it. What happened to each, by request id."""
    results: dict[int, str] = {}
    waiting = PullRequest.objects.filter(request__state=RequestState.AWAITING_MERGE).select_related(
        "request__tenant"
    )
    for row in waiting:
        try:
            results[row.request_id] = _poll(row)
        except (ForgeError, gitops.GitError) as error:
            logger.warning("pull request %s: %s", row, error.message)
            results[row.request_id] = f"not asked: {error.message}"
    return results


def _poll(row: PullRequest) -> str:
    if row.state == PullRequestState.MERGED:  # merged while its worker was opening it
        services.pull_request_merged(
            pull_request_id=row.pk, merged_by=row.merged_by, merge_sha=row.merge_sha
        )
        return "merged"
    try:
        pull = read_pull(forge_of(row.request.tenant), row.number)
    except ForgeError as error:
        if error.status != 404:
            raise
        pull = None
    if pull is None or pull.branch != row.branch:
        # None, or another branch's under that number: the forge forgot Berth's (deleted,
        # the repository made anew, a stand-in restarted).
        reason = (
            f"The forge no longer knows pull request #{row.number} of {row.branch}: nothing "
            "was applied. Ask again."
        )
        services.pull_request_closed(pull_request_id=row.pk, closed_by="", reason=reason)
        return "closed"
    if pull.state == PullRequestState.MERGED:
        services.pull_request_merged(
            pull_request_id=row.pk, merged_by=pull.merged_by, merge_sha=pull.merge_sha
        )
        return "merged"
    if pull.state == PullRequestState.CLOSED:
        services.pull_request_closed(pull_request_id=row.pk, closed_by=pull.closed_by, reason="")
        return "closed"
    return rebase_if_moved(row)


def rebase_if_moved(row: PullRequest) -> str:
    """The base branch moved since the branch was rendered on it: render the request's
    change again on the base as it is now and force-push its branch, or record why not."""
    tenancy_request = row.request
    remote = gitops_remote(tenancy_request.tenant)
    now = gitops.probe(remote)
    if not now or now == row.base_sha:
        return "open"
    try:
        inputs = plan_input_for(tenancy_request)
        written = gitops.write_branch(
            remote, row.branch, request_proposer(tenancy_request, inputs, remote)
        )
    except (gitops.GitError, ValueError) as error:
        problem = getattr(error, "message", str(error))
        records.record_rebase_problem(
            row=row, base_sha=now, problem=f"Berth could not rebase its branch: {problem}"
        )
        return f"not rebased: {problem}"
    if written.outcome == "unchanged":
        problem = (
            f"{row.base} already holds what this pull request changes (someone made the "
            "change there): nothing is left to merge; close it, and the request goes back "
            "to its requester"
        )
        records.record_rebase_problem(row=row, base_sha=written.base, problem=problem)
        return f"not rebased: {problem}"
    records.record_rebased(
        row=row,
        head_sha=written.sha,
        base_sha=written.base,
        commit=_commit(tenancy_request, remote, row.branch, written),
    )
    return f"rebased on {written.base[:12]}"


__all__ = ["PROPOSED", "PullState", "poll_pull_requests", "propose_first", "wants_pull_request"]
