"""The engine's answers to the domain's pages (tenants.engine): a request's plan, the GitOps
diff approval would push, and what each role may do. Connected in provisioning.apps."""

from __future__ import annotations

from django.core.exceptions import ObjectDoesNotExist

from provisioning import access, engine
from provisioning.gitops import GitError
from provisioning.plan import Plan
from tenants.engine import Engine
from tenants.errors import PlanUnavailable, PreviewUnavailable
from tenants.models import Request


def plan(tenancy_request: Request) -> Plan:
    try:
        return engine.current_plan(tenancy_request)
    except ObjectDoesNotExist as exc:
        raise PlanUnavailable(f"The plan cannot be rendered: {exc}") from exc


def gitops_preview(tenancy_request: Request) -> str:
    try:
        return engine.gitops_preview(tenancy_request)
    except GitError as exc:
        raise PreviewUnavailable(f"The tenant's repository could not be read: {exc}") from exc


ENGINE = Engine(
    plan=plan, gitops_preview=gitops_preview, effective_permissions=access.effective_permissions
)
