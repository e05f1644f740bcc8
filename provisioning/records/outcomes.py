"""Writes the provisioning engine makes: leases, run progress, and the domain records
(namespaces, projects) that follow from a finished run."""

from __future__ import annotations

import contextlib
from datetime import datetime, timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Case, F, Q, When
from django.utils import timezone
from rest_framework.exceptions import ValidationError

from provisioning.models import AppliedObject, ClusterWatch, GitWrite
from provisioning.plan import ObjectRef, PlanInput
from provisioning.versions import bundle_digest, tier_definition, tier_digest
from tenants import audit
from tenants.bulk import update_each
from tenants.choices import (
    CampaignState,
    EnvironmentState,
    NamespaceState,
    RequestKind,
    RequestState,
    TargetState,
)
from tenants.errors import DomainError
from tenants.kinds import kind_for
from tenants.models import (
    CampaignCommit,
    CampaignTarget,
    Cluster,
    EnvironmentTier,
    EphemeralEnvironment,
    Namespace,
    Project,
    Request,
    Run,
    Tenant,
    TruthTable,
    UpgradeCampaign,
)
from tenants.selectors.guardrails import GUARDRAILS_WAIT
from tenants.services import definitions, submit_request
from tenants.services.names import release_namespaces

LIVE_STATES = (NamespaceState.PENDING, NamespaceState.ACTIVE)


def acquire_lease(*, request_id: int, owner: str, seconds: float) -> bool:
    """Take the request's lease if it is free or expired; True when this worker holds it."""
    now = timezone.now()
    taken = (
        Request.objects.filter(pk=request_id)
        .filter(
            Q(lease_expires_at__isnull=True) | Q(lease_expires_at__lt=now) | Q(lease_owner=owner)
        )
        .update(lease_owner=owner, lease_expires_at=now + timedelta(seconds=seconds))
    )
    return taken == 1


def claim_companions(
    *,
    leader_id: int,
    owner: str,
    seconds: float,
    kinds: tuple[str, ...],
    cluster: str,
    limit: int,
    first: tuple[int, ...] = (),
) -> list[int]:
    """Lease, for `owner`, up to `limit` other approved requests of these kinds on this
    cluster that no worker holds, those in `first` first, then the oldest: they are
    provisioned with the leader. Returns their ids."""
    if limit <= 0:
        return []
    now = timezone.now()
    free = Q(lease_expires_at__isnull=True) | Q(lease_expires_at__lt=now)
    candidates = (
        Request.objects.filter(
            free, state=RequestState.APPROVED, kind__in=kinds, payload__cluster=cluster
        )
        .exclude(pk=leader_id)
        .order_by(Case(When(pk__in=first, then=0), default=1), "pk")
        .values("pk")[:limit]
    )
    # The lease conditions again outside the subquery: two workers picking the same rows,
    # the second one's UPDATE re-reads them after the first commits and leaves them.
    taken = Request.objects.filter(free, pk__in=candidates, state=RequestState.APPROVED).update(
        lease_owner=owner, lease_expires_at=now + timedelta(seconds=seconds)
    )
    if not taken:
        return []
    return list(
        Request.objects.filter(lease_owner=owner, state=RequestState.APPROVED)
        .exclude(pk=leader_id)
        .order_by("pk")
        .values_list("pk", flat=True)
    )


def renew_leases(*, request_ids: list[int], owner: str, seconds: float) -> None:
    Request.objects.filter(pk__in=request_ids, lease_owner=owner).update(
        lease_expires_at=timezone.now() + timedelta(seconds=seconds)
    )


def release_leases(*, request_ids: list[int], owner: str) -> None:
    Request.objects.filter(pk__in=request_ids, lease_owner=owner).update(
        lease_owner="", lease_expires_at=None
    )


WAITING = "waiting"  # the lease owner of a request that waits out an outage


def guardrails_installed(*, cluster_id: int, digest: str) -> None:
    """The cluster holds the guardrails of this digest since now; requests waiting for
    them go on (the sweep hands them out)."""
    Cluster.objects.filter(pk=cluster_id).update(
        guardrails_digest=digest, guardrails_installed_at=timezone.now()
    )
    Request.objects.filter(lease_owner=WAITING, wait_reason__startswith=GUARDRAILS_WAIT).update(
        next_try_at=None, lease_expires_at=None
    )


def wait(*, request_id: int, since: datetime, until: datetime, reason: str) -> None:
    """Park the request until `until`: no worker takes it before (the lease says so), the
    sweep hands it out after."""
    Request.objects.filter(pk=request_id).update(
        waiting_since=since,
        next_try_at=until,
        wait_reason=reason[:500],
        lease_owner=WAITING,
        lease_expires_at=until,
    )


def stop_waiting(*, request_id: int) -> None:
    Request.objects.filter(pk=request_id).update(
        waiting_since=None,
        next_try_at=None,
        wait_reason="",
        lease_owner="",
        lease_expires_at=None,
    )


def step_row(ref: ObjectRef, action: str) -> dict[str, Any]:
    return {
        "object": str(ref),
        "kind": ref.kind,
        "namespace": ref.namespace,
        "name": ref.name,
        "action": action,
        "outcome": "pending",
        "attempts": 0,
        "message": "",
    }


def start_steps(*, run: Run, steps: list[dict[str, Any]]) -> None:
    """Lay out every step as pending, keeping outcomes a previous attempt already reached."""
    done = {
        step["object"] + step["action"]: step
        for step in run.steps
        if step["outcome"] not in ("pending", "failed")
    }
    run.steps = [done.get(step["object"] + step["action"], step) for step in steps]
    run.attempts += 1
    run.save(update_fields=["steps", "attempts"])


def record_step(*, run: Run, index: int, outcome: str, attempts: int, message: str = "") -> None:
    note_step(run=run, index=index, outcome=outcome, attempts=attempts, message=message)
    write_steps(runs=[run])


def note_step(*, run: Run, index: int, outcome: str, attempts: int, message: str = "") -> None:
    """A step's outcome in the run as held in memory; `write_steps` writes it."""
    step = run.steps[index]
    step.update(outcome=outcome, attempts=step["attempts"] + attempts, message=message)


def write_steps(*, runs: list[Run]) -> None:
    """The steps of these runs as held in memory, in one statement."""
    update_each(Run, {run.pk: {"steps": run.steps} for run in runs})


def applied_versions(
    *, cluster: Cluster, refs: list[tuple[str, str]]
) -> dict[tuple[str, str], str]:
    """(apiVersion, object) → the resourceVersion Berth's last apply left, for these refs."""
    # Both columns of the unique index: found by it, not by reading the cluster's every row.
    rows = AppliedObject.objects.filter(
        cluster=cluster,
        api_version__in={api_version for api_version, _ in refs},
        object__in={ref for _, ref in refs},
    ).values_list("api_version", "object", "resource_version")
    return {(api_version, ref): version for api_version, ref, version in rows}


def remember_versions(*, cluster: Cluster, versions: dict[tuple[str, str], str]) -> None:
    """What each apply left, in one statement."""
    if not versions:
        return
    now = timezone.now()
    AppliedObject.objects.bulk_create(
        [
            AppliedObject(
                cluster=cluster,
                api_version=api_version,
                object=ref,
                resource_version=version,
                applied_at=now,
            )
            for (api_version, ref), version in versions.items()
        ],
        update_conflicts=True,
        unique_fields=["cluster", "api_version", "object"],
        update_fields=["resource_version", "applied_at"],
    )


def forget_versions(*, cluster: Cluster, refs: list[str]) -> None:
    AppliedObject.objects.filter(cluster=cluster, object__in=refs).delete()


@transaction.atomic
def record_namespaces_pending(
    *, requests: list[tuple[Request, PlanInput]], cluster: Cluster
) -> None:
    """The names these requests claimed become namespaces being provisioned on `cluster`."""
    Namespace.objects.filter(
        request__in=[r for r, _ in requests], state=NamespaceState.REQUESTED
    ).update(state=NamespaceState.PENDING)
    specs = [
        (tenancy_request, inputs, spec)
        for tenancy_request, inputs in requests
        for spec in inputs.namespaces
    ]
    taken = set(
        Namespace.objects.filter(
            cluster=cluster,
            name__in=[spec.name for _, _, spec in specs],
            state__in=LIVE_STATES,
        ).values_list("name", flat=True)
    )
    tiers = {
        tier.slug: tier
        for tier in EnvironmentTier.objects.filter(
            slug__in={spec.tier.slug for _, _, spec in specs}
        )
    }
    projects = {
        (r.tenant_id, inputs.project): Project.objects.filter(
            tenant=r.tenant, name=inputs.project
        ).first()
        for r, inputs in requests
        if inputs.project
    }
    Namespace.objects.bulk_create(
        [
            Namespace(
                name=spec.name,
                tenant=tenancy_request.tenant,
                cluster=cluster,
                tier=tiers[spec.tier.slug],
                project=projects.get((tenancy_request.tenant_id, inputs.project)),
                cpu_millis=spec.cpu_millis,
                memory_mib=spec.memory_mib,
                storage_gib=spec.storage_gib,
                request=tenancy_request,
            )
            for tenancy_request, inputs, spec in specs
            if spec.name not in taken
        ]
    )


@transaction.atomic
def record_outcomes(*, requests: list[tuple[Request, PlanInput]]) -> None:
    """After successful runs: Berth's records say what the cluster now has."""
    for tenancy_request, inputs in requests:
        if kind_for(tenancy_request.kind).creates_project:
            project, _ = Project.objects.get_or_create(
                tenant=tenancy_request.tenant,
                name=inputs.project,
                defaults={"gitops_engine": inputs.engine},
            )
            Namespace.objects.filter(
                tenant=tenancy_request.tenant,
                name__in=[ns.name for ns in inputs.namespaces],
                project__isnull=True,
            ).update(project=project)
    _activate_namespaces(requests)
    for tenancy_request, inputs in requests:
        _record_environment_outcome(tenancy_request, inputs)


def _activate_namespaces(requests: list[tuple[Request, PlanInput]]) -> None:
    """Each request's namespaces active, as its plan rendered them (quota, tier and
    template revisions)."""
    specs = {
        (r.tenant_id, inputs.cluster.name, spec.name): spec
        for r, inputs in requests
        for spec in inputs.namespaces
    }
    if not specs:
        return
    live = [
        namespace
        for namespace in Namespace.objects.filter(
            cluster__name__in={cluster for _, cluster, _ in specs},
            name__in={name for _, _, name in specs},
            state__in=LIVE_STATES,
        ).select_related("tier", "cluster")
        if (namespace.tenant_id, namespace.cluster.name, namespace.name) in specs
    ]
    if not live:
        return
    spec_of = {
        namespace.pk: specs[(namespace.tenant_id, namespace.cluster.name, namespace.name)]
        for namespace in live
    }
    revisions = _revisions_applied(live, spec_of)
    bundle = definitions.bundle_revision(digest=bundle_digest())
    update_each(
        Namespace,
        {
            namespace.pk: {
                "state": NamespaceState.ACTIVE,
                "cpu_millis": spec_of[namespace.pk].cpu_millis,
                "memory_mib": spec_of[namespace.pk].memory_mib,
                "storage_gib": spec_of[namespace.pk].storage_gib,
                "tier_revision": revisions[namespace.tier_id].pk,
                "bundle_revision": bundle.pk,
            }
            for namespace in live
        },
    )


def _record_environment_outcome(tenancy_request: Request, inputs: PlanInput) -> None:
    """An ephemeral environment started, or one ended (and the namespaces it removed)."""
    tenant = tenancy_request.tenant
    if kind_for(tenancy_request.kind).starts_environment:
        EphemeralEnvironment.objects.filter(
            request=tenancy_request, state=EnvironmentState.STARTING
        ).update(state=EnvironmentState.LIVE)
    ending = environment_ended_by(tenancy_request)
    if ending is not None:
        cause = tenancy_request.payload.get("cause", "")
        EphemeralEnvironment.objects.filter(pk=ending.pk).update(
            state=EnvironmentState.ENDED, ended_at=timezone.now(), end_cause=cause
        )
        audit.record(
            actor=None,
            action="environment.ended",
            obj=ending,
            tenant_id=ending.tenant_id,
            after={
                "cause": cause,
                "request": tenancy_request.pk,
                "namespace_deleted": bool(inputs.remove_namespaces),
            },
        )
    if inputs.remove_namespaces:
        gone = Namespace.objects.filter(
            tenant=tenant, cluster__name=inputs.cluster.name, name__in=inputs.remove_namespaces
        ).exclude(state=NamespaceState.DECOMMISSIONED)
        release_namespaces(gone)  # their names are free again
        gone.update(state=NamespaceState.DECOMMISSIONED, drift=[])


def _revisions_applied(live: list[Namespace], spec_of: dict[int, Any]) -> dict[int, Any]:
    """Tier id -> the revision of the tier definition the run rendered these namespaces
    from (the plan's own TierSpec, not the tier as it may stand by now)."""
    wanted = {}
    for namespace in live:
        tier = spec_of[namespace.pk].tier
        wanted[namespace.tier] = (tier_digest(tier), tier_definition(tier))
    return definitions.tier_revisions(wanted=wanted)


def environment_ended_by(tenancy_request: Request) -> EphemeralEnvironment | None:
    if not kind_for(tenancy_request.kind).ends_environment:
        return None
    return EphemeralEnvironment.objects.get(pk=tenancy_request.payload["environment"])


def mark_namespaces_decommissioning(*, tenancy_request: Request, inputs: PlanInput) -> list[int]:
    """Returns the ids of the requests that created them, for their own lifecycle."""
    namespaces = Namespace.objects.filter(
        tenant=tenancy_request.tenant,
        cluster__name=inputs.cluster.name,
        name__in=inputs.remove_namespaces,
        state=NamespaceState.ACTIVE,
    )
    creators = list(namespaces.exclude(request=None).values_list("request_id", flat=True))
    namespaces.update(state=NamespaceState.DECOMMISSIONING)
    return creators


def record_drift(*, namespace: Namespace, findings: list[dict[str, Any]]) -> None:
    namespace.drift = findings
    namespace.drift_checked_at = timezone.now()
    namespace.save(update_fields=["drift", "drift_checked_at"])


def record_object_drift(*, namespace_id: int, ref: str, finding: dict[str, Any] | None) -> bool:
    """One object's finding (None: it matches its plan again) in its namespace's drift, as
    the watcher sees each object on its own; True when what was recorded changed."""
    with transaction.atomic():
        namespace = Namespace.objects.select_for_update().filter(pk=namespace_id).first()
        if namespace is None:
            return False
        before = list(namespace.drift or [])
        after = [each for each in before if each.get("object") != ref]
        if finding is not None:
            after.append(finding)
            after.sort(key=lambda each: each.get("object", ""))
        namespace.drift = after
        namespace.drift_checked_at = timezone.now()
        namespace.save(update_fields=["drift", "drift_checked_at"])
        return after != before


def record_truth(*, tenant: Tenant, table: dict[str, Any]) -> None:
    TruthTable.objects.update_or_create(
        tenant=tenant,
        defaults={
            "taken_at": table["taken_at"],
            "rows": table["rows"],
            "counts": table["counts"],
            "problems": table["problems"],
        },
    )


# -- upgrade campaigns (engine.campaigns) ----------------------------------------------------


def acquire_campaign_lease(*, campaign_id: int, owner: str, seconds: float) -> bool:
    """Take the campaign's lease if it is free or lapsed; True when this worker holds it."""
    now = timezone.now()
    return (
        UpgradeCampaign.objects.filter(pk=campaign_id)
        .filter(
            Q(lease_expires_at__isnull=True) | Q(lease_expires_at__lt=now) | Q(lease_owner=owner)
        )
        .update(lease_owner=owner, lease_expires_at=now + timedelta(seconds=seconds))
        == 1
    )


def renew_campaign_lease(*, campaign_id: int, owner: str, seconds: float) -> None:
    UpgradeCampaign.objects.filter(pk=campaign_id, lease_owner=owner).update(
        lease_expires_at=timezone.now() + timedelta(seconds=seconds)
    )


def release_campaign_lease(*, campaign_id: int, owner: str) -> None:
    UpgradeCampaign.objects.filter(pk=campaign_id, lease_owner=owner).update(
        lease_owner="", lease_expires_at=None
    )


@transaction.atomic
def campaign_target_applied(*, target_id: int) -> None:
    """The namespace now runs the revisions the campaign rolls out."""
    target = CampaignTarget.objects.select_related("campaign", "namespace").get(pk=target_id)
    CampaignTarget.objects.filter(pk=target_id).update(
        state=TargetState.APPLIED, error="", applied_at=timezone.now()
    )
    moved: dict[str, Any] = {"tier_revision": target.to_tier_revision_id}
    if not CampaignCommit.objects.filter(  # else its templates' version moves with its files
        campaign=target.campaign,
        tenant_id=target.namespace.tenant_id,
        cluster_id=target.namespace.cluster_id,
        state=TargetState.PENDING,
    ).exists():
        moved["bundle_revision"] = target.campaign.bundle_revision_id
    Namespace.objects.filter(pk=target.namespace_id).update(**moved)


def campaign_target_failed(*, target_id: int, error: str) -> None:
    """The first failure pauses the campaign: nothing more rolls out until someone looks."""
    with transaction.atomic():
        target = CampaignTarget.objects.select_related("namespace").get(pk=target_id)
        target.state, target.error = TargetState.FAILED, error
        target.save(update_fields=["state", "error"])
        message = f"Paused: {target.namespace.name} failed: {error}"
        UpgradeCampaign.objects.filter(pk=target.campaign_id).update(
            state=CampaignState.PAUSED, status_message=message
        )
        audit.record(
            actor=None,
            action="campaign.paused",
            obj=target.campaign,
            after={"namespace": target.namespace.name, "error": error},
        )


def file_campaign_commit(*, commit_id: int) -> bool:
    """File the tenant_sync request whose commit writes a repository's files for a campaign
    (an open one for that tenant and cluster serves as well: it renders when it runs); the
    campaign's namespaces there now run its templates. False, and the campaign paused, when
    the rules or the request's checks refuse it."""
    commit = CampaignCommit.objects.select_related("campaign__created_by", "tenant", "cluster").get(
        pk=commit_id
    )
    campaign, cluster = commit.campaign, commit.cluster.name
    filed = Request.objects.filter(
        tenant=commit.tenant,
        kind=RequestKind.TENANT_SYNC,
        payload__cluster=cluster,
        state__in=(RequestState.SUBMITTED, RequestState.APPROVED),
    ).first()
    try:
        filed = filed or submit_request(
            tenant=commit.tenant,
            kind=RequestKind.TENANT_SYNC,
            requester=campaign.created_by,
            payload={
                "cluster": cluster,
                "reason": f"Upgrade campaign #{campaign.pk}: {campaign.reason}",
            },
        )
    except (DomainError, ValidationError) as error:
        message = error.detail if isinstance(error, ValidationError) else str(error)
        with transaction.atomic():
            CampaignCommit.objects.filter(pk=commit.pk).update(
                state=TargetState.FAILED, error=str(message)
            )
            UpgradeCampaign.objects.filter(pk=campaign.pk).update(
                state=CampaignState.PAUSED,
                status_message=f"Paused: {commit.tenant.slug}'s files on {cluster} were not "
                f"filed: {message}",
            )
            audit.record(
                actor=None,
                action="campaign.paused",
                obj=campaign,
                after={"tenant": commit.tenant.slug, "cluster": cluster, "error": str(message)},
            )
        return False
    with transaction.atomic():
        CampaignCommit.objects.filter(pk=commit.pk).update(
            state=TargetState.FILED, request=filed, error=""
        )
        reached = Namespace.objects.filter(
            tenant=commit.tenant, cluster=commit.cluster, state=NamespaceState.ACTIVE
        )
        if campaign.tier_id:
            reached = reached.filter(tier_id=campaign.tier_id)
        reached.update(bundle_revision=campaign.bundle_revision_id)
    return True


def finish_campaign(*, campaign_id: int) -> None:
    campaign = UpgradeCampaign.objects.get(pk=campaign_id)
    campaign.state, campaign.finished_at = CampaignState.DONE, timezone.now()
    commits = campaign.commits.count()
    campaign.status_message = f"Applied to {campaign.targets.count()} namespace(s)." + (
        f" {commits} repository commit(s) filed as tenant_sync requests." if commits else ""
    )
    campaign.save(update_fields=["state", "finished_at", "status_message"])
    audit.record(actor=None, action="campaign.done", obj=campaign)


@transaction.atomic
def campaign_target_rolled_back(*, target_id: int) -> None:
    """The namespace runs what it ran before the campaign again."""
    target = CampaignTarget.objects.get(pk=target_id)
    CampaignTarget.objects.filter(pk=target_id).update(state=TargetState.ROLLED_BACK, error="")
    Namespace.objects.filter(pk=target.namespace_id).update(
        tier_revision=target.from_tier_revision_id, bundle_revision=target.from_bundle_revision_id
    )


def campaign_rollback_failed(*, target_id: int, error: str) -> None:
    target = CampaignTarget.objects.select_related("namespace").get(pk=target_id)
    CampaignTarget.objects.filter(pk=target_id).update(error=error)
    UpgradeCampaign.objects.filter(pk=target.campaign_id).update(
        state=CampaignState.PAUSED,
        status_message=f"Rollback paused: {target.namespace.name} failed: {error}",
    )
    audit.record(
        actor=None,
        action="campaign.rollback_paused",
        obj=target.campaign,
        after={"namespace": target.namespace.name, "error": error},
    )


def finish_rollback(*, campaign_id: int) -> None:
    campaign = UpgradeCampaign.objects.get(pk=campaign_id)
    campaign.state, campaign.finished_at = CampaignState.ROLLED_BACK, timezone.now()
    campaign.status_message = "Every namespace it reached holds what it held before."
    campaign.save(update_fields=["state", "finished_at", "status_message"])
    audit.record(actor=None, action="campaign.rolled_back", obj=campaign)


# -- GitOps writes waiting for their repository's writer (engine.commits) -----------------


def queue_git_write(*, request_id: int, repository: str) -> GitWrite:
    """The request waits for the writer of `repository`; a row an earlier push already
    finished (the request's worker went away before taking it) is returned as it is."""
    row, created = GitWrite.objects.get_or_create(
        request_id=request_id, defaults={"repository": repository, "queued_at": timezone.now()}
    )
    if not created and not row.outcome:
        GitWrite.objects.filter(pk=row.pk).update(repository=repository)
    return row


def git_write_waiting(*, request_id: int) -> bool:
    return GitWrite.objects.filter(request_id=request_id, outcome="").exists()


def waiting_git_writes(
    *, repository: str, exclude: int, limit: int, since: datetime
) -> list[Request]:
    """Other requests of the repository waiting for its writer, oldest first: those still
    provisioning, queued since `since` (a row its worker abandoned long ago is not taken)."""
    return list(
        Request.objects.filter(
            pk__in=GitWrite.objects.filter(repository=repository, outcome="", queued_at__gte=since)
            .exclude(request_id=exclude)
            .values("request_id"),
            state=RequestState.PROVISIONING,
        )
        .select_related("tenant")
        .order_by("pk")[:limit]
    )


def finish_git_writes(*, outcomes: dict[int, tuple[str, str]]) -> None:
    """Requests a push carried: request id -> (outcome, message), in one statement."""
    rows = list(GitWrite.objects.filter(request_id__in=outcomes, outcome=""))
    for row in rows:
        row.outcome, row.message = outcomes[row.request_id]
    GitWrite.objects.bulk_update(rows, ["outcome", "message"])


def take_git_write(*, request_id: int) -> GitWrite | None:
    """The finished write of this request, removed from the queue; None if not finished."""
    row = GitWrite.objects.filter(request_id=request_id).exclude(outcome="").first()
    if row is not None:
        row.delete()
    return row


def drop_git_write(*, request_id: int) -> None:
    GitWrite.objects.filter(request_id=request_id).delete()


# -- the cluster watcher (engine.watch) -----------------------------------------------------


def take_watch_lease(*, cluster_id: int, holder: str, seconds: float, force: bool = False) -> bool:
    """The cluster's watch lease, if free, lapsed or already this holder's (or `force`: the
    caller holds the database's advisory lock): True when held."""
    now = timezone.now()
    # another replica may make the row first
    with contextlib.suppress(IntegrityError), transaction.atomic():
        ClusterWatch.objects.get_or_create(cluster_id=cluster_id)
    free = Q(lease_expires_at__isnull=True) | Q(lease_expires_at__lt=now) | Q(holder=holder)
    return (
        ClusterWatch.objects.filter(cluster_id=cluster_id)
        .filter(Q() if force else free)
        .update(holder=holder, lease_expires_at=now + timedelta(seconds=seconds), heartbeat_at=now)
        == 1
    )


def release_watch_lease(*, cluster_id: int, holder: str) -> None:
    ClusterWatch.objects.filter(cluster_id=cluster_id, holder=holder).update(lease_expires_at=None)


def watch_heartbeat(
    *,
    cluster_id: int,
    holder: str,
    seconds: float,
    events: int = 0,
    relists: int = 0,
    restarts: int = 0,
    lag_seconds: float | None = None,
) -> bool:
    """The holder is alive: its lease runs `seconds` more and its figures grow by what it
    did since the last beat. False when another holder has the cluster now."""
    changes: dict[str, Any] = {
        "heartbeat_at": timezone.now(),
        "lease_expires_at": timezone.now() + timedelta(seconds=seconds),
        "events": F("events") + events,
        "relists": F("relists") + relists,
        "restarts": F("restarts") + restarts,
    }
    if lag_seconds is not None:
        changes["lag_seconds"] = lag_seconds
    return ClusterWatch.objects.filter(cluster_id=cluster_id, holder=holder).update(**changes) == 1
