"""Guardrails before use: a tenant namespace goes only onto a cluster whose admission
policies, their bindings and Berth's tenant roles are present, current and say what they
should (docs/guardrails.md).

What a cluster should hold is `guardrail_objects`; "Install guardrails" stamps each with the
digest of the set (provisioning.guardrails.stamp). Checking is one list per kind, by Berth's
label, remembered for BERTH_GUARDRAILS_CHECK_SECONDS per cluster so a batch of requests, or
a busy minute, costs three reads. Each object found is compared with what it should be by
content, as drift compares (a stamp survives any edit). A check whose finding differs from
the last one recorded writes it to the audit log on the cluster (weakened, missing, whole
again): once per change, not once per check.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from django.conf import settings
from django.db import transaction

from provisioning.guardrails import PART_OF, berth_username, bootstrap_objects
from provisioning.guardrails.stamp import CHECKED_KINDS, gaps, guardrails_digest, weakened
from provisioning.inputs import cluster_spec
from provisioning.kube import ClusterClient, KubeError, cluster_client
from tenants import audit
from tenants.choices import GuardrailsMode
from tenants.models import Cluster
from tenants.selectors.guardrails import (
    GUARDRAILS_MISSING,
    GUARDRAILS_RESTORED,
    GUARDRAILS_WEAKENED,
    guardrails_check,
)

logger = logging.getLogger(__name__)
_checked: dict[tuple[int, str], tuple[float, str]] = {}  # (cluster, digest) -> (when, problem)
_lock = threading.Lock()


def berth_identity() -> str:
    return berth_username(settings.BERTH_NAMESPACE)


def guardrail_objects(cluster: Cluster) -> list[dict[str, Any]]:
    """What "Install guardrails" applies to this cluster (before stamping)."""
    return bootstrap_objects(
        cluster_spec(cluster),
        berth_namespace=settings.BERTH_NAMESPACE,
        berth_user=berth_identity(),
    )


def expected_digest(cluster: Cluster) -> str:
    return guardrails_digest(guardrail_objects(cluster))


def needs_guardrails(cluster: Cluster) -> bool:
    return not cluster.plan_only and cluster.guardrails == GuardrailsMode.BERTH


def live_guardrails(client: ClusterClient) -> list[dict[str, Any]]:
    """Berth's objects of the guardrail kinds on the cluster (those it installed and those
    its Helm chart did): one list per kind."""
    found = []
    for api_version, kind in CHECKED_KINDS:
        found += [
            {**obj, "apiVersion": api_version, "kind": kind}
            for obj in client.list(api_version, kind, label_selector=f"{PART_OF}=berth")
        ]
    return found


def guardrails_problem(cluster: Cluster, client: ClusterClient | None = None) -> str:
    """Why tenant namespaces may not go onto this cluster now ("" when they may): its
    guardrails are missing, from another Berth version, or say something else than they
    should (a binding switched from Deny to Audit), or cannot be read."""
    if not needs_guardrails(cluster):
        return ""
    expected = guardrail_objects(cluster)
    digest = guardrails_digest(expected)
    key = (cluster.pk, digest)
    now = time.monotonic()
    with _lock:
        remembered = _checked.get(key)
    if remembered is not None and now - remembered[0] < settings.BERTH_GUARDRAILS_CHECK_SECONDS:
        return remembered[1]
    try:
        live = live_guardrails(client or cluster_client(cluster))
    except KubeError as error:
        if error.transient:
            # The cluster does not answer at all: an outage, which the run meets at its
            # first apply and waits out (or fails) as any other; nothing is applied there
            # meanwhile. Not remembered: the next request checks again.
            logger.warning("guardrails on %s not checked: %s", cluster.name, error.message)
            return ""
        return (
            f"guardrails on {cluster.name} could not be checked ({error.message}): Berth "
            "needs to list ClusterRoles and admission policies there (docs/guardrails.md)"
        )
    missing = gaps(expected, live, digest)
    changed = weakened(expected, live, digest)
    if changed:
        problem = (
            f"guardrails on {cluster.name} weakened ({'; '.join(changed + missing)}): a "
            "platform admin re-installs them (admin: Clusters, Install guardrails); the "
            "request goes on by itself once they are whole again"
        )
    elif missing:
        problem = (
            f"guardrails not installed on {cluster.name} ({'; '.join(missing)}): a platform "
            "admin installs them (admin: Clusters, Install guardrails); the request goes on "
            "by itself once they are there"
        )
    else:
        problem = ""
    _record_finding(cluster, changed, [line for line in missing if line.startswith("missing ")])
    with _lock:
        _checked[key] = (now, problem)
    return problem


def _record_finding(cluster: Cluster, changed: list[str], absent: list[str]) -> None:
    """One audit event on the cluster when what the checks find of its installed guardrails
    changes: weakened (one says something else), missing (one is gone), or restored (whole
    again without an install). Nothing for a cluster never installed (its list says "not
    installed") nor for guardrails that are only outdated (a new Berth: the list says so)."""
    if not cluster.guardrails_digest:
        return
    action = GUARDRAILS_WEAKENED if changed else GUARDRAILS_MISSING if absent else ""
    problems = changed + absent  # none: whole, or only outdated

    def news() -> bool:
        last, found = guardrails_check(cluster)
        return (last, found) != (action, problems) and bool(action or last)

    if not news():  # one read per check, mostly; the lock only when there is news
        return
    with transaction.atomic():
        # Checks in other workers record the same news once: the first one, holding the
        # cluster's row, writes it; the others find it written.
        Cluster.objects.select_for_update().filter(pk=cluster.pk).first()
        if news():
            audit.record(
                actor=None,
                action=action or GUARDRAILS_RESTORED,
                obj=cluster,
                after={"problems": problems},
            )


def forget_checks(cluster: Cluster) -> None:
    """After an install: the next request checks again at once."""
    with _lock:
        for key in [key for key in _checked if key[0] == cluster.pk]:
            del _checked[key]


def forget_every_check() -> None:
    """Every cluster checked again at its next change (a process reused for another
    database: the test suite's workers)."""
    with _lock:
        _checked.clear()
