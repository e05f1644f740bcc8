"""Cluster bootstrap: put Berth's guardrails on a cluster (Django admin → Clusters →
"Install guardrails").

What is applied is `provisioning.guardrails.bootstrap_objects`: Berth's ClusterRoles and the
ValidatingAdmissionPolicies with their bindings, the same whatever the tenants (each tenant's
parameters, such as its allowed domains, come with its namespaces). Idempotent (server-side
apply, field manager `berth`): run it once per cluster before the first tenant namespace,
and again after upgrading Berth.

The protect policy exempts one identity: Berth's ServiceAccount,
`system:serviceaccount:<BERTH_NAMESPACE>:berth`. Installing it while Berth reaches the
cluster as someone else would lock Berth out of its own objects, so the install first asks
the API server who Berth is (a SelfSubjectReview, Kubernetes >= 1.28) and refuses when the
answer differs. An API server that cannot say (the sandbox, older clusters) is trusted.
"""

from __future__ import annotations

import difflib
import logging
from dataclasses import dataclass

import urllib3
from kubernetes import client as k8s
from kubernetes.client.exceptions import ApiException

from provisioning.guardrails.stamp import guardrails_digest, stamped
from provisioning.jobs import cluster_client
from provisioning.jobs.campaigns import held, yaml_lines
from provisioning.kube import ClusterClient, KubeError
from provisioning.plan import MANAGED_BY, ref_of
from provisioning.reconcile.guardrails import berth_identity, forget_checks, guardrail_objects
from provisioning.records import leases
from provisioning.schema import validate_objects
from tenants import audit
from tenants.models import Cluster, User

logger = logging.getLogger(__name__)


class BootstrapError(Exception):
    """The guardrails were not installed; the message says why and what to do."""


@dataclass(frozen=True)
class Installed:
    cluster: str
    identity: str  # who Berth is on the cluster ("" when the API server could not say)
    outcomes: tuple[tuple[str, str], ...]  # (object, created | configured | unchanged)

    @property
    def summary(self) -> str:
        results = [result for _, result in self.outcomes]
        counts = ", ".join(
            f"{results.count(result)} {result}"
            for result in ("created", "configured", "unchanged", "kept (the Helm chart's)")
            if results.count(result)
        )
        return f"{len(self.outcomes)} guardrail objects applied ({counts})"


def install_change(cluster: Cluster) -> str:
    """What installing the guardrails now would change on the cluster: a YAML diff of the
    fields Berth sets, object by object ("" when they are current). Reads the cluster."""
    client = cluster_client(cluster)
    lines: list[str] = []
    # Unstamped: the digest annotation follows from the rest, which the diff shows.
    for obj in guardrail_objects(cluster):
        ref = ref_of(obj)
        lines += difflib.unified_diff(
            yaml_lines(held(obj, client.get(ref))),
            yaml_lines(obj),
            fromfile=f"a/{ref}",
            tofile=f"b/{ref}",
        )
    return "".join(lines)


def whoami(client: ClusterClient) -> str:
    """The username the cluster's credentials authenticate as; "" when the API server has
    no SelfSubjectReview (before 1.28)."""
    api = k8s.AuthenticationV1Api(client.api_client)
    body = k8s.V1SelfSubjectReview(api_version="authentication.k8s.io/v1", kind="SelfSubjectReview")
    try:
        review = api.create_self_subject_review(
            body=body, _request_timeout=client.policy.timeout_seconds
        )
    except ApiException as exc:
        if exc.status in (404, 405):
            return ""
        raise KubeError(
            f"{exc.status} {exc.reason or ''}".strip(), status=exc.status, transient=False
        ) from exc
    except (urllib3.exceptions.HTTPError, TimeoutError, ConnectionError) as exc:
        raise KubeError(
            f"cluster unreachable: {type(exc).__name__}: {exc}", status=None, transient=True
        ) from exc
    user = review.status.user_info if review.status else None
    return (user.username or "") if user else ""


def install_guardrails(*, cluster: Cluster, actor: User | None = None) -> Installed:
    """Apply the guardrails to one cluster. Raises BootstrapError (nothing applied) or
    KubeError (the API refused; what was applied before stays, a re-run finishes it)."""
    if cluster.plan_only:
        raise BootstrapError(f"{cluster.name} is plan-only: nothing is ever applied to it")
    objects = guardrail_objects(cluster)
    digest = guardrails_digest(objects)
    objects = stamped(objects, digest)
    problems = validate_objects(objects)
    if problems:  # pragma: no cover - the bootstrap is fixed data; tests keep it valid
        raise BootstrapError(
            "the guardrail objects do not validate: "
            + "; ".join(f"{key}: {', '.join(map(str, errors))}" for key, errors in problems.items())
        )
    client = cluster_client(cluster)
    identity = whoami(client)
    expected = berth_identity()
    if identity and identity != expected:
        raise BootstrapError(
            f"Berth signs in to {cluster.name} as {identity!r}, but the admission policy "
            f"lets only {expected!r} change Berth's objects: installing it would lock Berth "
            f"out of them. Give Berth that ServiceAccount's credentials for this cluster "
            f"(or set BERTH_NAMESPACE to where it lives), then install again."
        )
    outcomes = []
    for obj in objects:
        ref = ref_of(obj)
        live = client.get(ref)
        if ((live or {}).get("metadata", {}).get("labels") or {}).get(MANAGED_BY) == "Helm":
            # The chart installs some of these itself (admission.fluxTenancy): its own stay.
            outcomes.append((str(ref), "kept (the Helm chart's)"))
            continue
        # Read first (it decides what is kept anyway): the version says "unchanged".
        known = None if live is None else live["metadata"].get("resourceVersion")
        outcome = client.apply(obj, known_version=known)
        outcomes.append((str(ref), outcome.result))
    installed = Installed(cluster=cluster.name, identity=identity, outcomes=tuple(outcomes))
    leases.guardrails_installed(cluster_id=cluster.pk, digest=digest)
    forget_checks(cluster)
    audit.record(
        actor=actor,
        action="install_guardrails",
        obj=cluster,
        after={"identity": identity, "objects": dict(outcomes), "digest": digest},
    )
    logger.info("guardrails installed on %s: %s", cluster.name, installed.summary)
    return installed
