"""What a request's commit would change in the tenant's repository: the files it reads and
what they become, for the commit itself, for the preview a person approves, and for the
truth table and campaigns (a tenant_sync read against a snapshot of the branch)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings

from provisioning import gitops, gitops_plan
from provisioning.inputs import (
    apps_of_request,
    gitops_input_for,
    kept_input,
    plan_input_for,
)
from provisioning.inputs.kinds import plan_kind_for
from provisioning.plan import PlanInput, engine_family
from tenants.choices import RequestKind
from tenants.models import Cluster, Request, Tenant
from tenants.provisioner import GitOpsChange


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
