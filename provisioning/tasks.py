"""Celery tasks: thin wrappers; the database stays the source of truth.

The broker only carries "go look at request N". Tasks are idempotent and safe to run
twice; a lost message is recovered by `sweep`, which beat runs periodically.
"""

from __future__ import annotations

import logging
from datetime import datetime

from celery import shared_task
from django.db import InterfaceError, OperationalError
from django.db.models import Q
from django.utils import timezone

from provisioning import bootstrap, jobs
from provisioning.jobs import campaigns
from provisioning.jobs.watch_lock import watched_clusters
from provisioning.kube import KubeError
from provisioning.models import QueuedKey, WorkerHeartbeat
from provisioning.reconcile import batches_of, converge_batch, door, pull_requests
from tenants import audit
from tenants.choices import CampaignState, NamespaceState, RequestState
from tenants.models import Cluster, Request, Tenant, UpgradeCampaign, User

logger = logging.getLogger(__name__)

WORKING_STATES = (RequestState.APPROVED, RequestState.PROVISIONING)


@shared_task(bind=True, name="provisioning.heartbeat")
def heartbeat(self) -> str:
    """Beat sends this every minute; a worker that runs it shows it is alive and consuming."""
    hostname = self.request.hostname or "unknown"
    WorkerHeartbeat.objects.update_or_create(
        hostname=hostname, defaults={"seen_at": timezone.now()}
    )
    return hostname


# The database went away mid-task (a restart, a dropped connection): try again soon, with
# the same task id, so the lease this task took is its own again, rather than leaving the
# request to the sweep once that lease runs out. Celery's Django fixup drops the broken
# connection before the retry.
DATABASE_GONE = (OperationalError, InterfaceError)


@shared_task(
    bind=True,
    name="provisioning.converge",
    autoretry_for=DATABASE_GONE,
    max_retries=None,
    retry_backoff=2,
    retry_backoff_max=30,
    retry_jitter=True,
)
def converge(self, request_id: int, companions: list[int] | None = None) -> str:
    """Provision the request, with `companions` (queued with it) and others approved for its
    cluster (provisioning.reconcile.runs); a request another worker's batch holds or finished costs
    one query."""
    worker = _worker(self)
    queued = [request_id, *(companions or ())]
    # Those already done, or held by another worker's batch, cost this one query.
    found = {
        pk: _why_not(*row, worker=worker)
        for pk, *row in Request.objects.filter(pk__in=queued).values_list(
            "pk", "state", "lease_owner", "lease_expires_at"
        )
    }
    open_ids = [pk for pk in queued if found.get(pk, "gone") == ""]
    if not open_ids:
        return found.get(request_id) or f"request {request_id} does not exist"
    results = converge_batch(request_id=open_ids[0], worker=worker, companions=tuple(open_ids[1:]))
    for each, outcome in results.items():
        logger.info("request %s: %s", each, outcome)
        if outcome.waiting and outcome.retry_at is not None:
            # Waiting out an outage: come back then (the sweep would too, a little later).
            converge.apply_async((each,), eta=outcome.retry_at)
    if request_id in results:
        return str(results[request_id])
    return found.get(request_id) or f"request {request_id} does not exist"


def _why_not(state: str, owner: str, lease_ends: datetime | None, *, worker: str) -> str:
    """Why a worker has nothing to do for a request now ("": it has)."""
    if state not in WORKING_STATES:
        return f"nothing to do: request is {state}"
    if owner not in ("", worker) and lease_ends is not None and lease_ends > timezone.now():
        return "busy: another worker holds the lease"
    return ""


@shared_task(name="provisioning.sweep")
def sweep() -> list[int]:
    """Re-enqueue every request that should be moving but has no worker on it."""
    now = timezone.now()
    stranded = list(
        Request.objects.filter(state__in=WORKING_STATES)
        .filter(Q(lease_expires_at__isnull=True) | Q(lease_expires_at__lt=now))
        .values_list("pk", flat=True)
    )
    for leader, *companions in batches_of(stranded):
        converge.delay(leader, companions)
    sweep_campaigns()
    if QueuedKey.objects.filter(not_before__lte=now).exists():
        reconcile_keys.delay()  # a key whose message was lost, or whose worker died
    if Request.objects.filter(state=RequestState.AWAITING_MERGE).exists():
        # The fallback for a webhook that never came: only requests awaiting a merge.
        poll_pull_requests.delay()
    return stranded


@shared_task(bind=True, name="provisioning.reconcile_keys", autoretry_for=DATABASE_GONE)
def reconcile_keys(self) -> dict[str, str]:
    """The keyed queue's due keys, each reconciled by this worker alone
    (provisioning.reconcile.door)."""
    return {str(key): str(outcome) for key, outcome in door.drain(worker=_worker(self)).items()}


@shared_task(name="provisioning.poll_pull_requests")
def poll_pull_requests() -> dict[int, str]:
    """Ask the forge about the pull requests of requests awaiting a merge: merged ones go
    on, closed ones go back to their requester, open ones on a moved base are rebased."""
    return pull_requests.poll_pull_requests()


def sweep_campaigns() -> list[int]:
    """Campaigns rolling (or rolling back) with no worker on them: a worker died mid-wave,
    or the message was lost. The lease keeps a campaign to one worker, so a second message
    for a live one does nothing."""
    now = timezone.now()
    stranded = (
        UpgradeCampaign.objects.filter(
            state__in=(CampaignState.ROLLING, CampaignState.ROLLING_BACK)
        )
        .filter(Q(lease_expires_at__isnull=True) | Q(lease_expires_at__lt=now))
        .values_list("pk", "state")
    )
    found = []
    for campaign_id, state in stranded:
        task = roll_back_campaign if state == CampaignState.ROLLING_BACK else roll_campaign
        task.delay(campaign_id)
        found.append(campaign_id)
    return found


@shared_task(name="provisioning.discover_namespaces")
def discover_namespaces(cluster_id: int) -> list[str]:
    """Claim the namespaces already on a newly registered cluster (tenants.signals)."""
    cluster = Cluster.objects.filter(pk=cluster_id).first()
    if cluster is None:
        return []
    try:
        jobs.discover_hibernation(cluster)
        return jobs.discover_namespaces(cluster)
    except KubeError as error:
        logger.warning(
            "namespaces on %s not read: %s (retry from its admin page)", cluster.name, error.message
        )
        return []


@shared_task(name="provisioning.install_guardrails")
def install_guardrails(cluster_id: int, actor_id: int | None = None) -> str:
    """Put Berth's guardrails on a cluster (a platform admin's action, or `make run` for its
    sandbox); the cluster records their digest, and requests waiting for them go on."""
    cluster = Cluster.objects.get(pk=cluster_id)
    actor = User.objects.filter(pk=actor_id).first() if actor_id else None
    try:
        installed = bootstrap.install_guardrails(cluster=cluster, actor=actor)
    except (bootstrap.BootstrapError, KubeError) as error:
        why = error.message if isinstance(error, KubeError) else str(error)
        audit.record(
            actor=actor, action="install_guardrails.failed", obj=cluster, after={"why": why}
        )
        logger.warning("guardrails not installed on %s: %s", cluster.name, why)
        return f"failed: {why}"
    sweep.delay()  # the requests that waited for them, now rather than at the next sweep
    return installed.summary


@shared_task(name="provisioning.reconcile")
def reconcile() -> int:
    """Find drift in every active namespace; repair where the tier says so. Namespaces on a
    cluster whose watcher is healthy cost nothing here: it sees their drift as it happens
    (and lists each kind once an hour as its own safety net)."""
    drifted = 0
    watched = watched_clusters()  # a watcher looks for kube-green as it starts
    for cluster in Cluster.objects.filter(plan_only=False).exclude(pk__in=watched):
        try:  # who carries sleep out there: kube-green, once it is installed, else Berth
            jobs.discover_hibernation(cluster)
        except KubeError as error:
            logger.warning("kube-green on %s not looked for: %s", cluster.name, error.message)
    for namespace in jobs.active_namespaces().exclude(cluster_id__in=watched):
        try:
            drifted += bool(jobs.sweep_namespace(namespace))
        except KubeError as error:
            logger.warning("reconcile of %s failed: %s", namespace.name, error.message)
    return drifted


@shared_task(name="provisioning.truth")
def take_truth_tables() -> int:
    """Every tenant with live namespaces: its truth table retaken (what disagrees is counted
    by the berth_truth_objects gauge)."""
    taken = 0
    for tenant in Tenant.objects.filter(namespaces__state=NamespaceState.ACTIVE).distinct():
        try:
            jobs.take_truth(tenant)
            taken += 1
        except Exception:  # one tenant's failure must not stop the others
            logger.exception("truth table of %s failed", tenant.slug)
    return taken


@shared_task(name="provisioning.retake_truth")
def retake_truth_table(tenant_id: int) -> bool:
    """One tenant's table retaken now: a request of its went Ready or was removed, so the
    table taken while it was in flight (its files committed, its namespaces not yet Ready:
    orphans, said falsely) is not shown until beat's next round."""
    tenant = Tenant.objects.filter(pk=tenant_id).first()
    if tenant is None:
        return False
    jobs.take_truth(tenant)
    return True


def _worker(task: object) -> str:
    request = task.request  # type: ignore[attr-defined]
    return f"{request.hostname or 'local'}:{request.id or 'direct'}"


@shared_task(bind=True, name="provisioning.roll_campaign")
def roll_campaign(self, campaign_id: int) -> str:
    """An approved or resumed upgrade campaign, wave by wave."""
    return campaigns.roll(campaign_id, _worker(self))


@shared_task(bind=True, name="provisioning.roll_back_campaign")
def roll_back_campaign(self, campaign_id: int) -> str:
    return campaigns.roll_back(campaign_id, _worker(self))
