"""Validate before create: every object of a plan against its schema and Berth's own rules,
before the first API call.
"""

from __future__ import annotations

import logging
from typing import Any

from provisioning.guardrails.checks import claim_problems, guardrail_problems
from provisioning.plan import Plan, PlanInput, ref_of

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
    for ref in plan.delete:
        if ref.kind != "Namespace" or not ref.name.startswith(prefix):
            problems.setdefault(str(ref), []).append(
                f"a tenant's plan deletes only namespaces named {prefix}*"
            )
        else:
            found = claim_problems(ref.name, inputs, deleting=True)
            if found:
                problems.setdefault(str(ref), []).extend(found)
    return problems


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
