"""Helpers the tests of the namespace-name registry (tests/tenants/test_name_*.py) share:
the live claim on a name, requests as payments' people make them, and a Kargo project."""

from __future__ import annotations

from tenants import services
from tenants.errors import InvalidInput
from tenants.models import NamespaceClaim, Project
from tests.support.workflow import ask_for_namespace, ask_for_project


def live(name: str) -> NamespaceClaim | None:
    return NamespaceClaim.objects.filter(name=name, released_at__isnull=True).first()


def submit(world, kind, requester=None, **payload):
    return services.submit_request(
        tenant=world["tenant"],
        kind=kind,
        requester=requester or world["developer"],
        payload=payload,
    )


def small_namespace(world, *, app: str, tier: str):
    """A namespace request of the smallest kind on the sandbox cluster, by the developer."""
    return ask_for_namespace(world["tenant"], world["developer"], app=app, tier=tier)


def kargo_project(world, app="shop", *, tiers=("dev", "staging"), provisioned=True):
    """A project on Argo CD + Kargo, submitted (and, for the records, provisioned)."""
    created = ask_for_project(world["tenant"], world["owner"], app=app, tiers=tiers)
    if provisioned:
        Project.objects.get_or_create(
            tenant=world["tenant"], name=app, defaults={"gitops_engine": "argocd_kargo"}
        )
    return created


def errors(exc: InvalidInput) -> str:
    return str(exc.field_errors)
