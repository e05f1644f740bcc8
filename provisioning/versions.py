"""What a namespace's objects were rendered from, as digests: its tier's definition and
Berth's own templates (the bundle). Pure: the service layer numbers each new digest as a
revision (tenants.services.definitions), a namespace records the revisions it runs, and a
digest that differs from the one it records means an upgrade is due.

The bundle's digest is that of a fixed sample rendered by the current code: every engine,
every network preset and Pod Security level, the cluster objects and the GitOps files. A
new Berth version that renders anything differently has a new digest; one that only moves
code around keeps it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from functools import lru_cache
from itertools import product

from provisioning.gitops_plan import render_files
from provisioning.plan.model import (
    ARGOCD,
    FLUX,
    ClusterSpec,
    KargoProject,
    NamespaceSpec,
    PlanInput,
    TenantSpec,
    TierSpec,
)
from provisioning.plan.rendering import render

PRESETS = ("isolated", "ingress")
LEVELS = ("privileged", "baseline", "restricted")
ENGINES = ("argocd", "argocd_kargo", "flux")


def _digest(value: object) -> str:
    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def tier_definition(spec: TierSpec) -> dict[str, object]:
    """The tier as plans see it: what a tier revision stores and shows."""
    return dataclasses.asdict(spec)


def tier_digest(spec: TierSpec) -> str:
    return _digest(tier_definition(spec))


def tier_from_definition(definition: dict[str, object]) -> TierSpec:
    """The tier a stored revision describes, to render it again as it was. A field the
    revision predates takes its default; one since removed is left out."""
    known = {each.name for each in dataclasses.fields(TierSpec)}
    return TierSpec(**{key: value for key, value in definition.items() if key in known})


def _sample_tiers() -> list[TierSpec]:
    roles = {
        "owner": "berth-tenant-edit",
        "member": "berth-tenant-edit",
        "viewer": "berth-tenant-view",
    }
    return [
        TierSpec(f"t{index}", level, preset, 500, 512, 100, 128, roles, position=index)
        for index, (preset, level) in enumerate(product(PRESETS, LEVELS))
    ]


def _sample(engine: str) -> PlanInput:
    tiers = _sample_tiers()
    tenant = TenantSpec(
        "sample",
        "Sample team",
        {"owner": ("sample-owners",), "member": ("sample-devs",), "viewer": ("sample-viewers",)},
        "https://git.example.com/sample/gitops.git",
    )
    namespaces = tuple(
        NamespaceSpec(f"sample-web-{tier.slug}", tier, 1000, 2048, 5, "web") for tier in tiers
    )
    kargo = (KargoProject("web", "sample-web-kargo", tuple(tiers)),) if "kargo" in engine else ()
    return PlanInput(
        request_id=1,
        tenant=tenant,
        cluster=ClusterSpec("sample", "argocd", True, "ingress-nginx"),
        engine=engine,
        namespaces=namespaces,
        project="web",
        app="web",
        kargo_namespace="sample-web-kargo",
        tenant_engines=frozenset({FLUX if engine == "flux" else ARGOCD}),
        kargo_projects=kargo,
    )


def samples() -> list[PlanInput]:
    """The fixed sample the bundle's digest renders, once per engine."""
    return [_sample(engine) for engine in ENGINES]


@lru_cache(maxsize=1)
def bundle_digest() -> str:
    """The digest of what this Berth renders for the sample: changes with the templates."""
    rendered = {}
    for engine in ENGINES:
        inputs = _sample(engine)
        plan = render(inputs)
        rendered[engine] = {"objects": list(plan.redacted()), "files": render_files(inputs)}
    return _digest(rendered)
