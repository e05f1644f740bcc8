"""Validate before create: every object of a plan against its schema and Berth's own rules,
before the first API call.
"""

from __future__ import annotations

import logging
from typing import Any

from provisioning.guardrails.checks import guardrail_problems
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
    for index, obj in enumerate(plan.apply):
        key = object_key(obj, index)
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
    return problems


def object_key(obj: Any, index: int) -> str:
    try:
        return str(ref_of(obj))
    except (KeyError, TypeError, AttributeError):
        return f"object #{index}"
