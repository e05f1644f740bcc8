"""The GitOps step of a run: bring the tenant's repository in step with the application a
request touches, in one commit, and record it; and the preview of that commit before
approval.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

from provisioning import gitops, gitops_plan
from provisioning import selectors as reads
from provisioning.inputs import (
    apps_of_request,
    gitops_input_for,
    kept_input,
    plan_input_for,
    plan_inputs_for,
)
from provisioning.inputs.kinds import plan_kind_for
from provisioning.models import GitCommit
from provisioning.plan import PlanInput, engine_family
from provisioning.records import git_writes, run_steps
from provisioning.signals import git_push_failed
from tenants.choices import NamespaceState, RequestKind
from tenants.models import Cluster, Namespace, Request, Run, Tenant
from tenants.provisioner import GitOpsChange

GITOPS_DONE = ("committed", "unchanged", "skipped")

logger = logging.getLogger(__name__)


def gitops_step_row(repo_url: str) -> dict[str, Any]:
    """The run's last step: one commit to the tenant's repository (or why there is none)."""
    where = gitops.display_url(repo_url) or "(no repository)"
    return {
        "object": f"GitOps commit {where}",
        "kind": "GitOps",
        "namespace": "",
        "name": where,
        "action": "commit",
        "outcome": "pending",
        "attempts": 0,
        "message": "",
    }


@dataclass(frozen=True)
class GitFailure:
    """Why the GitOps step failed: `error` for the request, `message` git's own (redacted);
    `transient` when the remote did not answer (the request waits, it does not fail)."""

    error: str
    message: str
    transient: bool


def gitops_step(
    *, tenancy_request: Request, run: Run, inputs: PlanInput, index: int
) -> GitFailure | None:
    """Run the GitOps step (row `index` of the run) unless an earlier attempt finished it;
    None, or why it failed. Its outcome is noted in the run; the caller writes it."""
    return gitops_steps([(tenancy_request, run, inputs, index)])[tenancy_request.pk]


def gitops_steps(steps: list[tuple[Request, Run, PlanInput, int]]) -> dict[int, GitFailure | None]:
    """The GitOps step of several requests' runs (request, run, inputs, row), by request id:
    None, or why it failed. Written together (`write_gitops_all`); each outcome is noted in
    its run, which the caller writes."""
    todo = [
        (r, inputs)
        for r, run, inputs, index in steps
        if run.steps[index]["outcome"] not in GITOPS_DONE
    ]
    written = write_gitops_all(
        requests=[r for r, _ in todo], inputs={r.pk: inputs for r, inputs in todo}
    )
    failures: dict[int, GitFailure | None] = {}
    for tenancy_request, run, _, index in steps:
        outcome = written.get(tenancy_request.pk)
        failures[tenancy_request.pk] = None
        if isinstance(outcome, GitOpsWritten):
            run_steps.note_step(
                run=run,
                index=index,
                outcome=outcome.outcome,
                attempts=outcome.attempts,
                message=outcome.message,
            )
        elif outcome is not None:
            failures[tenancy_request.pk] = _git_failure(tenancy_request, run, index, outcome)
    return failures


def _git_failure(tenancy_request: Request, run: Run, index: int, error: Exception) -> GitFailure:
    attempts = getattr(error, "attempts", 1)
    message = getattr(error, "message", str(error))
    git_push_failed.send(sender=Request, request_id=tenancy_request.pk)
    if getattr(error, "transient", False):
        # Left pending: the next try starts with it. git's words name the server's
        # address: the log has them, people read what happened.
        logger.warning("request %s: repository unreachable: %s", tenancy_request.pk, message)
        said = "its server did not answer (the connection failed or timed out)"
        return GitFailure(error=said, message=said, transient=True)
    run_steps.note_step(run=run, index=index, outcome="failed", attempts=attempts, message=message)
    failure = f"{run.steps[index]['object']}: {message}"
    logger.warning("request %s failed: %s", tenancy_request.pk, failure)
    return GitFailure(error=failure, message=message, transient=False)


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


def gitops_remote(tenant: Tenant) -> gitops.Remote:
    return gitops.Remote.parse(
        tenant.gitops_repo_url, branch=tenant.gitops_branch, credentials=tenant.gitops_credentials
    )


@dataclass(frozen=True)
class Proposed:
    """What a request's commit would change: the files it reads and what they become."""

    current: dict[str, str]
    files: dict[str, str]
    notes: tuple[str, ...]
    app: str  # the application named in the message ("" for the tenant's own files)
    engine: str
    indexes: tuple[str, ...] = ()  # the cluster indexes among the files


def index_paths(inputs: PlanInput, desired: list[PlanInput]) -> dict[str, str]:
    """The cluster indexes a request reads and writes, by engine family: those of the
    applications it touches and of the tenant's roots it applies or removes."""
    families = {engine_family(wanted.engine) for wanted in desired}
    families |= inputs.tenant_engines | inputs.remove_tenant_engines
    families = families or {engine_family(inputs.engine)}
    return {family: gitops_plan.index_path(inputs, family) for family in sorted(families)}


def propose_files(
    tenancy_request: Request, inputs: PlanInput, read: Callable[[tuple[str, ...]], dict[str, str]]
) -> Proposed:
    """The repository as this request leaves it: each application it touches rendered
    from every live environment (gitops_plan.converge keeps what the team owns), and the
    index of the request's cluster listing what the tenant's roots there apply (deleted
    when the tenant leaves the cluster). `read(paths)` gives what the branch holds now."""
    template = settings.BERTH_GITOPS_IMAGE_REPOSITORY
    desired = [
        gitops_input_for(tenancy_request, inputs, app=app)
        for app in apps_of_request(tenancy_request, inputs)
    ]
    indexes = index_paths(inputs, desired)
    within = (*indexes.values(), *(path for d in desired for path in gitops_plan.scope(d)))
    current = read(within)
    files: dict[str, str] = {}
    notes: list[str] = []
    entries: dict[str, dict[str, list[str]]] = {family: {} for family in indexes}
    for wanted in desired:
        scope = gitops_plan.scope(wanted)
        rendered = gitops_plan.render_files(wanted, image_repository_template=template)
        converged = gitops_plan.converge(current, rendered, scope)
        files.update(converged.files)
        notes += converged.notes
        entries[engine_family(wanted.engine)][wanted.app] = gitops_plan.index_entries(wanted)
    for family, index in indexes.items():
        have = current.get(index)
        if family in inputs.remove_tenant_engines:  # its root here goes: nothing reads it
            if have is not None and not gitops_plan.is_managed(have):
                files[index] = have
                notes.append(
                    f"{index}: not Berth's any more (its first line is not "
                    "Berth's header); the tenant's root here is gone, so nothing "
                    "applies it"
                )
            continue
        content, note = have, ""
        for app, listed in entries[family].items() or [("", [])]:
            content, note = gitops_plan.render_index(
                content, inputs, listed, app=app, family=family
            )
        if content is not None:
            files[index] = content
        notes += [note] if note else []
    first = desired[0] if desired else None
    return Proposed(
        current=current,
        files=dict(sorted(files.items())),
        notes=tuple(notes),
        app=first.app if first else "",
        engine=first.engine if first else inputs.engine,
        indexes=tuple(indexes.values()),
    )


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


def proposed_sync(
    tenant: Tenant, cluster: Cluster, branch: dict[str, str], inputs: PlanInput | None = None
) -> Proposed:
    """The files a tenant_sync of the tenant on the cluster would leave (every live
    application's, the cluster's index), read against a snapshot of the branch
    (`gitops.read_snapshot`): what the truth table compares and a campaign rolls out."""
    unsaved = Request(
        pk=0, tenant=tenant, kind=RequestKind.TENANT_SYNC, payload={"cluster": cluster.name}
    )
    return propose_files(
        unsaved,
        inputs or kept_input(tenant, cluster),
        lambda within: {
            path: content for path, content in branch.items() if path.startswith(tuple(within))
        },
    )


def gitops_preview(tenancy_request: Request, inputs: PlanInput | None = None) -> GitOpsChange:
    """The GitOps change approving this request would push, against the repository's
    current content (reads the remote; no lock, no commit). `inputs`: its plan's, when at
    hand."""
    tenant = tenancy_request.tenant
    if (
        not tenant.gitops_repo_url.strip()
        or not plan_kind_for(tenancy_request.kind).writes_repository
    ):
        return GitOpsChange(diff="", binds="")
    remote = gitops_remote(tenant)
    inputs = inputs or plan_input_for(tenancy_request)
    proposed = propose_files(
        tenancy_request, inputs, lambda within: gitops.read_files(remote, within)
    )
    indexes = set(proposed.indexes)
    own_before = {path: c for path, c in proposed.current.items() if path not in indexes}
    own_after = {path: c for path, c in proposed.files.items() if path not in indexes}
    lines = [
        f"{index} {entry}\n"
        for index in sorted(indexes)
        for entry in gitops_plan.index_changes(
            proposed.current.get(index), proposed.files.get(index)
        )
    ]
    return GitOpsChange(
        diff=gitops_plan.diff_files(proposed.current, proposed.files),
        binds=gitops_plan.diff_files(own_before, own_after) + "".join(lines),
    )
