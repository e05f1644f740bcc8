"""Validate before create: every object of a plan against its schema and Berth's own rules,
before the first API call.
"""

from __future__ import annotations

import logging
from typing import Any

from provisioning.guardrails.checks import claim_problems, guardrail_problems
from provisioning.plan import ARGOCD, FLUX, ROOT_NAME, Plan, PlanInput, ref_of

logger = logging.getLogger(__name__)


def validate_plan(
    plan: Plan, inputs: PlanInput, *, crd_dir: str | None = None
) -> dict[str, list[str]]:
    """Every problem of a plan, by object ("Kind/namespace/name"), before anything is
    applied: its schema (built-in kinds always; custom kinds when the CRDs are on this
    machine, else skipped and logged) and Berth's own guardrail rules. Empty: go ahead."""
    from provisioning.schema import SchemaUnavailable, validate_object

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
            errors = [f"schema: {error}" for error in validate_object(obj, crd_dir=crd_dir)]
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
            found = [f"a tenant's plan deletes only namespaces named {prefix}* and, when a "
                     "project or the tenant goes, the Kargo Project, roots and credentials "
                     "Berth made for them"]
        if found:
            problems.setdefault(str(ref), []).extend(found)
    return problems


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
        found |= {("Application", tenant.apps_namespace, ROOT_NAME),
                  ("Secret", argocd, f"berth-repo-{tenant.slug}"),
                  ("AppProject", argocd, tenant.slug)}
    if FLUX in inputs.remove_tenant_engines:
        found.add(("Kustomization", tenant.gitops_namespace, ROOT_NAME))
    return found


def _identity(obj: Any) -> tuple[str, str, str, str] | None:
    """(group, kind, namespace, name): what the API server knows an object by."""
    try:
        meta = obj["metadata"]
        return (obj["apiVersion"].rpartition("/")[0], obj["kind"],
                meta.get("namespace", ""), meta["name"])
    except (KeyError, TypeError, AttributeError):
        return None


def object_key(obj: Any, index: int) -> str:
    try:
        return str(ref_of(obj))
    except (KeyError, TypeError, AttributeError):
        return f"object #{index}"
