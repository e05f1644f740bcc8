"""The pull requests the provisioner opens for requests in merge-request mode
(reconcile.pull_requests): opened, rendered again on a base that moved, or why it could not be."""

from __future__ import annotations

from provisioning.gitops.forge import PullState
from provisioning.models import GitCommit
from tenants.choices import PullRequestState
from tenants.models import PullRequest, Request


def record_opened(
    *,
    tenancy_request: Request,
    repository: str,
    pull: PullState,
    branch: str,
    base: str,
    base_sha: str,
    commit: GitCommit,
) -> PullRequest:
    """The request's pull request as the forge opened it, and the commit on its branch."""
    row, _ = PullRequest.objects.update_or_create(
        request=tenancy_request,
        defaults={
            "tenant_id": tenancy_request.tenant_id,
            "repository": repository,
            "number": pull.number,
            "url": pull.url,
            "branch": branch,
            "base": base,
            "head_sha": pull.head_sha,
            "base_sha": base_sha,
            "state": PullRequestState.OPEN,
        },
    )
    GitCommit.objects.filter(request=tenancy_request, branch=branch).delete()
    commit.save()
    return row


def record_rebased(*, row: PullRequest, head_sha: str, base_sha: str, commit: GitCommit) -> None:
    """Its branch rendered again on the base as it is now, and force-pushed."""
    PullRequest.objects.filter(pk=row.pk).update(
        head_sha=head_sha, base_sha=base_sha, rebase_problem=""
    )
    GitCommit.objects.filter(request_id=row.request_id, branch=row.branch).delete()
    commit.save()


def record_rebase_problem(*, row: PullRequest, base_sha: str, problem: str) -> None:
    """Why its branch could not be rendered again on the moved base (tried again when the
    base moves on)."""
    PullRequest.objects.filter(pk=row.pk).update(base_sha=base_sha, rebase_problem=problem)


def record_merged_commit(*, row: PullRequest) -> None:
    """The request's commit is on the base branch now."""
    GitCommit.objects.filter(request_id=row.request_id, branch=row.branch).update(
        branch=row.base, sha=row.head_sha or row.merge_sha
    )
