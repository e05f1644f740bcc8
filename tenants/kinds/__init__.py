"""The kinds of request, one module each: what a request of that kind asks for, in one place.

A kind's module declares a `Kind` (see `tenants.kinds.base`): its payload and how it is
validated, the names it claims, what it adds to the tenant's budget, what the approval
rules see of it, what it takes away (showback stops billing it), whether it is asked on
the request form, whether people hear of it. Everything else in the domain asks the
registry (`kind_for`) instead of comparing kinds.

The engine's side of a kind, what its plan is rendered from and which GitOps files it
changes, is in `provisioning.inputs.kinds`, one module per kind too, keyed by the same
values: `tenants` may not import `provisioning`, and a plan input is the engine's
vocabulary (tier specs, Kargo projects, the engines a tenant runs), not the domain's.

Adding a kind: a value in `tenants.choices.RequestKind` (and its migration), a module here
declaring its `Kind`, one in `provisioning/inputs/kinds/` declaring its plan input, each
listed in its package's `KINDS`, and their tests. `tests/tenants/test_request_kinds.py` fails
while either side lacks one, or while anything outside the two packages compares kinds.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from tenants.errors import InvalidInput
from tenants.kinds import (
    access,
    decommission,
    end_environment,
    environment,
    ephemeral,
    namespace,
    project,
    project_decommission,
    quota_change,
    sleep,
    tenant_decommission,
    tenant_sync,
)
from tenants.kinds.base import Kind, Target
from tenants.models import Tenant
from tenants.registry import Registry

__all__ = ["Kind", "Target", "all_kinds", "kind_for", "kinds_where", "validate_payload"]

KINDS: Registry[Kind] = Registry(
    module.KIND
    for module in (
        namespace,
        project,
        environment,
        quota_change,
        decommission,
        ephemeral,
        end_environment,
        tenant_sync,
        project_decommission,
        tenant_decommission,
        access,
        sleep,
    )
)


def kind_for(request_kind: str) -> Kind:
    """The kind of this value (a `RequestKind` or its string); KeyError for none."""
    return KINDS[request_kind]


def all_kinds() -> Iterator[Kind]:
    return iter(KINDS)


def kinds_where(**declared: object) -> tuple[str, ...]:
    """The values of the kinds that declare all of these (`kinds_where(quiet=True)`): for
    a query on requests of several kinds."""
    return KINDS.where(**declared)


def validate_payload(*, kind: str, tenant: Tenant, payload: dict[str, Any]) -> dict[str, Any]:
    """Return the normalised payload or raise InvalidInput by field. The payload serializers
    (DRF's, the schema language) stop here: nothing above sees their errors."""
    if kind not in KINDS:
        raise InvalidInput.of({"kind": f"Unknown request kind {kind!r}."})
    serializer = KINDS[kind].payload(data=payload, tenant=tenant)
    if not serializer.is_valid():
        raise InvalidInput.from_nested(serializer.errors)
    return dict(serializer.validated_data)
