"""The provisioning engine, as the domain's pages and API see it.

The layering (docs/architecture.md): the engine (`provisioning`) reads the domain and reports
back through `tenants.services`; the domain never imports the engine. Pages and the API
still show what the engine would do: a request's plan and the digest an approval binds to,
the GitOps diff approval would push, what each role may do in a tier's namespaces. They ask
here; the engine plugs itself in when Django starts (`provisioning.apps`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ImproperlyConfigured

from tenants.choices import RequestState
from tenants.models import Request, Tenant

# States in which the plan still describes the future (afterwards, the run records the past).
PLANNED_STATES = frozenset({RequestState.SUBMITTED, RequestState.APPROVED, RequestState.FAILED,
                            RequestState.PROVISIONING})


@dataclass(frozen=True)
class Engine:
    # The plan approval would apply (an object with `digest`, `apply`, `delete` and
    # `to_yaml()`); raises tenants.errors.PlanUnavailable.
    plan: Callable[[Request], Any]
    # The GitOps files approval would push, as a unified diff; raises PreviewUnavailable.
    gitops_preview: Callable[[Request], str]
    # Per tier the tenant may use: what its owners, members, viewers and GitOps identity
    # may do there, in plain words.
    effective_permissions: Callable[[Tenant], list[dict]]


_connected: list[Engine] = []


def connect(engine: Engine) -> None:
    _connected[:] = [engine]


def _engine() -> Engine:
    if not _connected:
        raise ImproperlyConfigured(
            "No provisioning engine is connected: 'provisioning' must be in INSTALLED_APPS."
        )
    return _connected[0]


def plan(tenancy_request: Request) -> Any:
    return _engine().plan(tenancy_request)


def gitops_preview(tenancy_request: Request) -> str:
    return _engine().gitops_preview(tenancy_request)


def effective_permissions(tenant: Tenant) -> list[dict]:
    return _engine().effective_permissions(tenant)
