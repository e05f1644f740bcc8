"""Validate before create: every object of a plan against its schema and Berth's own rules,
before the first API call.
"""

from __future__ import annotations

import functools
import logging
from typing import Any

from provisioning.guardrails.checks import claim_problems, guardrail_problems
from provisioning.kube import ClusterClient, KubeError, cluster_client
from provisioning.plan import ARGOCD, FLUX, ROOT_NAME, Plan, PlanInput, ref_of
from provisioning.schema import SchemaUnavailable, ServedSchemas, validate_object
from provisioning.schema.served import document_path, index_hashes

logger = logging.getLogger(__name__)


def validate_plan(
    plan: Plan,
    inputs: PlanInput,
    *,
    crd_dir: str | None = None,
    served: ServedSchemas | None = None,
) -> dict[str, list[str]]:
    """Every problem of a plan, by object ("Kind/namespace/name"), before anything is
    applied: its schema (built-in kinds always; custom kinds against the schemas the target
    cluster serves, else the CRDs in $BERTH_CRD_DIR, else skipped and logged) and Berth's
    own guardrail rules. Empty: go ahead.

    ``served`` defaults to the target cluster's schemas when the inputs were read from the
    database (their claims are set): hand-made inputs name no registered cluster."""
    if served is None and inputs.claims is not None:
        served = cluster_schemas(inputs.cluster.name)
    problems: dict[str, list[str]] = {}
    seen: set[tuple[str, str, str, str]] = set()
    for index, obj in enumerate(plan.apply):
        key = object_key(obj, index)
        identity = _identity(obj)
        if identity is not None and identity in seen:
            problems.setdefault(key, []).append(
                "listed twice in the plan: a plan applies each object once"
            )
        seen.add(identity)
        try:
            errors = [
                f"schema: {error}" for error in validate_object(obj, crd_dir=crd_dir, served=served)
            ]
        except SchemaUnavailable as exc:
            logger.info("schema check of %s skipped: %s", key, exc)
            errors = []
        errors += guardrail_problems(obj, inputs)
        if errors:
            problems.setdefault(key, []).extend(errors)
    prefix = f"{inputs.tenant.slug}-"
    others = deletable_objects(inputs)
    for ref in plan.delete:
        if ref.kind == "Namespace" and ref.name.startswith(prefix):
            found = claim_problems(ref.name, inputs, deleting=True)
        elif ref.kind != "Namespace" and (ref.kind, ref.namespace, ref.name) in others:
            found = []
        else:
            found = [
                f"a tenant's plan deletes only namespaces named {prefix}* and, when a "
                "project or the tenant goes, the Kargo Project, roots and credentials "
                "Berth made for them"
            ]
        if found:
            problems.setdefault(str(ref), []).extend(found)
    return problems


def cluster_schemas(cluster_name: str) -> ServedSchemas:
    """The schemas a registered cluster serves, fetched through its client when the cache
    has none (so a batch of plans reads the cluster's row once, not once per plan). A
    plan-only or unregistered cluster has none to give: custom kinds are then checked
    against $BERTH_CRD_DIR."""

    @functools.cache  # one row read and one client per check
    def client() -> ClusterClient | None:
        from tenants.models import Cluster

        cluster = Cluster.objects.filter(name=cluster_name).first()
        if cluster is None or cluster.plan_only:
            logger.info(
                "cluster %s is plan-only or not registered: Berth asks it for no schemas",
                cluster_name,
            )
            return None
        return cluster_client(cluster)

    def fetch(group: str, version: str) -> dict[str, Any] | None:
        try:
            asked = client()
            return asked and asked.openapi_v3(document_path(group, version))
        except KubeError as error:
            raise SchemaUnavailable(
                f"cluster {cluster_name} did not give its schemas for {group}/{version}: "
                f"{error.message}"
            ) from error

    def hashes() -> dict[str, str]:
        try:
            asked = client()
            return index_hashes((asked and asked.openapi_v3()) or {})
        except KubeError as error:
            raise SchemaUnavailable(
                f"cluster {cluster_name} did not give its OpenAPI index: {error.message}"
            ) from error

    return ServedSchemas(cluster_name, fetch, hashes=hashes)


def warm() -> None:
    """Load what a plan is checked against (the client's models, the CRDs) and the
    templates' digest now, as a worker starts: else its first request pays for them."""
    from provisioning.plan import render
    from provisioning.versions import bundle_digest, samples

    bundle_digest()
    for inputs in samples():
        validate_plan(render(inputs), inputs)


def deletable_objects(inputs: PlanInput) -> set[tuple[str, str, str]]:
    """(kind, namespace, name) of what besides namespaces a plan may delete: what Berth made
    for the project or tenant the request decommissions."""
    tenant, argocd = inputs.tenant, inputs.cluster.argocd_namespace
    found = set()
    found |= {("Project", "", project.namespace) for project in inputs.remove_kargo}
    if ARGOCD in inputs.remove_tenant_engines:
        found |= {
            ("Application", tenant.apps_namespace, ROOT_NAME),
            ("Secret", argocd, f"berth-repo-{tenant.slug}"),
            ("AppProject", argocd, tenant.slug),
        }
    if FLUX in inputs.remove_tenant_engines:
        found.add(("Kustomization", tenant.gitops_namespace, ROOT_NAME))
    return found


def _identity(obj: Any) -> tuple[str, str, str, str] | None:
    """(group, kind, namespace, name): what the API server knows an object by."""
    try:
        meta = obj["metadata"]
        return (
            obj["apiVersion"].rpartition("/")[0],
            obj["kind"],
            meta.get("namespace", ""),
            meta["name"],
        )
    except (KeyError, TypeError, AttributeError):
        return None


def object_key(obj: Any, index: int) -> str:
    try:
        return str(ref_of(obj))
    except (KeyError, TypeError, AttributeError):
        return f"object #{index}"
