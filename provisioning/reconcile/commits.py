"""Bring the tenant's repository in step with what a request touches, in one commit, and
record it: requests of one repository that reach its writer together go out in one push
(what each commit holds: proposals; the run's step around it: git_step).
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

from provisioning import gitops, gitops_plan
from provisioning import selectors as reads
from provisioning.inputs import (
    plan_input_for,
    plan_inputs_for,
)
from provisioning.inputs.kinds import plan_kind_for
from provisioning.models import GitCommit
from provisioning.plan import PlanInput
from provisioning.reconcile.proposals import gitops_remote, propose_files
from provisioning.records import git_writes
from tenants.choices import NamespaceState
from tenants.models import Namespace, Request, Tenant

logger = logging.getLogger(__name__)


def write_gitops_all(
    *, requests: list[Request], inputs: dict[int, PlanInput] | None = None
) -> dict[int, GitOpsWritten | Exception]:
    """`write_gitops` of several requests (their plan inputs by id when at hand): all are
    queued for their repository's writer first, so the first one written carries the others
    of its repository in its push, one commit each. A repository that does not answer is
    tried once, not once per request. Each request's outcome, or the GitError (ValueError:
    its files cannot be rendered) it met."""
    inputs = inputs or {}
    queues: dict[int, str] = {}
    for tenancy_request in requests:
        try:
            writer = _writer_of(tenancy_request)
        except gitops.GitError:
            continue  # an unusable URL: its own write says so
        if isinstance(writer, tuple):
            queues[tenancy_request.pk] = writer[1]
            if len(requests) > 1:
                git_writes.queue_git_write(request_id=tenancy_request.pk, repository=writer[1])
    results: dict[int, GitOpsWritten | Exception] = {}
    unreachable: dict[str, Exception] = {}
    for tenancy_request in requests:
        queue = queues.get(tenancy_request.pk)
        if queue in unreachable:
            results[tenancy_request.pk] = unreachable[queue]
            continue
        try:
            results[tenancy_request.pk] = write_gitops(
                request_id=tenancy_request.pk,
                inputs=inputs.get(tenancy_request.pk),
                known=inputs,
                loaded=tenancy_request,
            )
        except (gitops.GitError, ValueError) as error:
            results[tenancy_request.pk] = error
            if getattr(error, "transient", False) and queue:
                unreachable[queue] = error
    return results


@dataclass(frozen=True)
class GitOpsWritten:
    outcome: str  # committed | unchanged | skipped
    message: str
    attempts: int = 0
    commit: GitCommit | None = None


def writes_a_repository(tenancy_request: Request) -> bool:
    """Whether the request's GitOps step commits to a repository (else it is skipped)."""
    return _why_no_repository(tenancy_request) is None


def _why_no_repository(tenancy_request: Request) -> GitOpsWritten | None:
    """The skipped outcome of a request that writes no repository (None: it writes one)."""
    if not plan_kind_for(tenancy_request.kind).writes_repository:
        # Quotas are Berth's, never in the repository: nothing there depends on them.
        return GitOpsWritten("skipped", "a quota change changes no GitOps file")
    tenant = tenancy_request.tenant
    if not tenant.gitops_repo_url.strip():
        return GitOpsWritten(
            "skipped", f"tenant {tenant.slug} has no GitOps repository configured: nothing written"
        )
    return None


def _writer_of(tenancy_request: Request) -> tuple[gitops.Remote, str] | GitOpsWritten:
    """The repository a request writes and its writer's queue, or why it writes none."""
    skipped = _why_no_repository(tenancy_request)
    if skipped is not None:
        return skipped
    tenant = tenancy_request.tenant
    remote = gitops_remote(tenant)
    return remote, writer_queue(tenant, remote)


def write_gitops(
    *,
    request_id: int,
    inputs: PlanInput | None = None,
    known: dict[int, PlanInput] | None = None,
    loaded: Request | None = None,
) -> GitOpsWritten:
    """Bring the tenant's repository in step with what this request changes, in one commit
    (none when it already is), and record the commit. Requests of the same repository that
    reach the writer together go out in one push, one commit each: whichever worker holds
    the repository's lock commits every waiting request (`GitWrite`) and pushes once; the
    others find their outcome when the lock is theirs. `known`: plan inputs of other
    requests at hand, by id; `loaded`: the request, when at hand. Raises GitError (or
    ValueError when the files cannot be rendered)."""
    tenancy_request = loaded or Request.objects.select_related("tenant").get(pk=request_id)
    writer = _writer_of(tenancy_request)
    if isinstance(writer, GitOpsWritten):
        return writer
    remote, queue = writer
    inputs = inputs or plan_input_for(tenancy_request)
    known = known or {}
    if git_writes.queue_git_write(request_id=request_id, repository=queue).outcome:
        return _taken(tenancy_request)  # an earlier push took it (this worker's, or another's)
    writes = {request_id: _RequestWrite(tenancy_request, inputs, remote)}

    def batch(checkout: gitops.Checkout) -> list[tuple[int, gitops.Proposer]]:
        if not git_writes.git_write_waiting(request_id=request_id):
            return []  # the push of the worker before took this request with its own
        others = [
            other
            for other in git_writes.waiting_git_writes(
                repository=queue,
                exclude=request_id,
                limit=settings.BERTH_GITOPS_BATCH_MAX - 1,
                since=timezone.now() - BATCH_HORIZON,
            )
            if other.pk not in writes
        ]
        found = plan_inputs_for([other for other in others if other.pk not in known])
        approvers = reads.approvers_by_request([other.pk for other in others])
        for other in others:
            inputs_of_other = known.get(other.pk) or found[other.pk]
            if isinstance(inputs_of_other, Exception):
                # Its own worker meets it, not this push.
                logger.warning(
                    "GitOps: request %s left to its own worker: %s", other.pk, inputs_of_other
                )
                continue
            writes[other.pk] = _RequestWrite(
                other,
                inputs_of_other,
                remote,
                approvers=approvers.get(other.pk, []),
                skip_on_error=True,
            )
        carried = [pk for pk in writes if pk != request_id]
        return [(pk, writes[pk].propose) for pk in (request_id, *carried)]

    written: dict[int, GitOpsWritten] = {}

    def settled(results: dict[int, gitops.WriteResult]) -> None:
        # Under the lock: each carried request's outcome is recorded before its own worker
        # (waiting for the lock) looks for it.
        written.update(_finish_all({pk: writes[pk] for pk in results}, results))
        git_writes.finish_git_writes(
            outcomes={
                pk: (
                    outcome.outcome,
                    f"{outcome.message} (pushed together with request #{request_id}'s)",
                )
                for pk, outcome in written.items()
                if pk != request_id
            }
        )
        git_writes.drop_git_write(request_id=request_id)

    try:
        results = gitops.write_batch(remote, batch, settled=settled)
    except gitops.GitError as error:
        if not error.transient:
            git_writes.drop_git_write(request_id=request_id)
        raise
    except ValueError:
        git_writes.drop_git_write(request_id=request_id)
        raise
    if request_id not in results:
        return _taken(tenancy_request)
    return written[request_id]


# A waiting write older than this was abandoned by its worker: nobody else takes it.
BATCH_HORIZON = timedelta(minutes=10)


def writer_queue(tenant: Tenant, remote: gitops.Remote) -> str:
    """Requests batch with the same tenant's writes to the same branch only: the push is
    made with that tenant's credentials."""
    return hashlib.sha256(f"{tenant.pk}\n{remote.url}\n{remote.branch}".encode()).hexdigest()


def _taken(tenancy_request: Request) -> GitOpsWritten:
    """The outcome another worker's push left for this request."""
    row = git_writes.take_git_write(request_id=tenancy_request.pk)
    if row is None:  # pragma: no cover - only a waiting row's push leaves none
        raise gitops.GitError("the repository's writer lost this request", transient=True)
    commit = GitCommit.objects.filter(request=tenancy_request).order_by("-pk").first()
    return GitOpsWritten(row.outcome, row.message, 1, commit)


def request_proposer(
    tenancy_request: Request, inputs: PlanInput, remote: gitops.Remote
) -> gitops.Proposer:
    """What one request's commit would be, read from a checkout: for a write of its own (a
    pull request's branch) rather than a batch's push."""
    return _RequestWrite(tenancy_request, inputs, remote).propose


class _RequestWrite:
    """One request's commit within a push: what it proposes, and what is recorded after."""

    def __init__(
        self,
        tenancy_request: Request,
        inputs: PlanInput,
        remote: gitops.Remote,
        *,
        approvers: list[str] | None = None,
        skip_on_error: bool = False,
    ) -> None:
        self.request = tenancy_request
        self.inputs = inputs
        self.remote = remote
        self.skip_on_error = skip_on_error
        self.approvers = reads.approvers_of(tenancy_request) if approvers is None else approvers
        self.own = [ns.name for ns in inputs.namespaces] + list(inputs.remove_namespaces)
        if plan_kind_for(tenancy_request.kind).owns_payload_namespace:
            self.own = [tenancy_request.payload["namespace"]]
        self.earlier: list[tuple[str, str, dict[str, str]]] = []
        self.notes: list[str] = []

    def propose(self, checkout: gitops.Checkout) -> gitops.Proposal:
        try:
            return self._propose(checkout)
        except gitops.GitError:
            raise  # the repository's trouble is every request's
        except Exception:
            if not self.skip_on_error:
                raise
            # Another request's own trouble: its worker meets it, this push goes on.
            logger.warning(
                "GitOps: request %s left to its own worker", self.request.pk, exc_info=True
            )
            raise gitops.Skip from None

    def _propose(self, checkout: gitops.Checkout) -> gitops.Proposal:
        # Read under the repository lock: a later writer sees what an earlier one wrote.
        tenancy_request, inputs = self.request, self.inputs
        proposed = propose_files(tenancy_request, inputs, checkout.read)
        changed = gitops_plan.changes(proposed.current, proposed.files)
        self.notes[:] = proposed.notes
        if not changed and not GitCommit.objects.filter(request=tenancy_request).exists():
            # Pushed by an attempt that died before recording it: record it now.
            found = checkout.find_commit(tenancy_request.pk)
            self.earlier[:] = [found] if found else []
        message = gitops_plan.commit_message(
            kind=tenancy_request.kind,
            request_id=tenancy_request.pk,
            tenant=tenancy_request.tenant.slug,
            app=proposed.app,
            engine=proposed.engine,
            namespaces=self.own,
            changed=changed,
            notes=proposed.notes,
            approvers=self.approvers,
            reason=str(tenancy_request.payload.get("reason", "")),
            environment=str(tenancy_request.payload.get("env_slug", "")),
            cluster=inputs.cluster.name,
        )
        return gitops.Proposal(current=proposed.current, files=proposed.files, message=message)

    def finish(self, result: gitops.WriteResult) -> tuple[GitOpsWritten, GitCommit | None]:
        """What the push did for this request, and the commit to record (not saved yet)."""
        remote = self.remote
        proposal = result.proposal
        left = "".join(f"; left {note}" for note in self.notes)
        if result.outcome == "committed":
            changed = gitops_plan.changes(proposal.current, proposal.files)
            commit = self._commit(
                sha=result.sha,
                message=proposal.message,
                diff=gitops_plan.diff_files(proposal.current, proposal.files),
                files=changed,
                pushes=result.pushes,
            )
            kinds = list(changed.values())
            summary = ", ".join(
                f"{kinds.count(kind)} {kind}"
                for kind in ("added", "modified", "deleted")
                if kinds.count(kind)
            )
            return GitOpsWritten(
                "committed",
                f"{result.sha[:12]} pushed to {remote.branch}: {summary}{left}",
                result.attempts,
            ), commit
        if self.earlier:
            sha, diff, files = self.earlier[0]
            commit = self._commit(sha=sha, message="", diff=diff, files=files, pushes=0)
            return GitOpsWritten(
                "committed",
                f"{sha[:12]} was pushed by an earlier attempt{left}",
                result.attempts,
            ), commit
        at = f" (at {result.sha[:12]})" if result.sha else ""
        return GitOpsWritten(
            "unchanged", f"{remote.branch} already holds these files{at}{left}", result.attempts
        ), None

    def _commit(self, **fields: Any) -> GitCommit:
        return GitCommit(
            request=self.request, repo_url=self.remote.url, branch=self.remote.branch, **fields
        )

    @property
    def namespaces(self) -> set[tuple[str, str]]:
        """(cluster, name) of the namespaces its commit is about."""
        names = [ns.name for ns in self.inputs.namespaces] + list(self.inputs.remove_namespaces)
        return {(self.inputs.cluster.name, name) for name in names}


def _finish_all(
    writes: dict[int, _RequestWrite], results: dict[int, gitops.WriteResult]
) -> dict[int, GitOpsWritten]:
    """Each request's outcome of a push, its commit recorded with the namespaces it is
    about: a few statements for the whole push."""
    finished = {pk: writes[pk].finish(result) for pk, result in results.items()}
    commits = {pk: commit for pk, (_, commit) in finished.items() if commit is not None}
    GitCommit.objects.bulk_create(list(commits.values()))
    about = {pk: writes[pk].namespaces for pk in commits}
    tenants = {writes[pk].request.tenant_id for pk in commits}
    found = (
        (
            Namespace.objects.filter(
                tenant_id__in=tenants,
                name__in={name for pairs in about.values() for _, name in pairs},
            )
            .exclude(state=NamespaceState.DECOMMISSIONED)
            .values_list("pk", "tenant_id", "cluster__name", "name")
        )
        if commits
        else []
    )
    link = GitCommit.namespaces.through
    link.objects.bulk_create(
        [
            link(gitcommit_id=commit.pk, namespace_id=namespace_id)
            for namespace_id, tenant_id, cluster, name in found
            for pk, commit in commits.items()
            if tenant_id == writes[pk].request.tenant_id and (cluster, name) in about[pk]
        ]
    )
    return {pk: replace(outcome, commit=commits.get(pk)) for pk, (outcome, _) in finished.items()}
