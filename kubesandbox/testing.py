"""Helpers for test suites that run against the stand-in (pytest is imported lazily)."""

from __future__ import annotations

import os
from pathlib import Path

# Where the upstream CRDs (Argo CD, Kargo, Flux) live beside a checkout: ../shared/crds.
CRD_DIR_VARIABLE = "KUBESANDBOX_CRD_DIR"


def shared_crds_dir(start: str | os.PathLike[str] | None = None) -> Path | None:
    """``$KUBESANDBOX_CRD_DIR``, else the first ``shared/crds`` beside ``start`` (default:
    this package's checkout) or one of its parents; None when there is none."""
    configured = os.environ.get(CRD_DIR_VARIABLE)
    if configured:
        return Path(configured) if Path(configured).is_dir() else None
    here = Path(start or Path(__file__).resolve().parent).resolve()
    for parent in [here, *here.parents]:
        candidate = parent / "shared" / "crds"
        if candidate.is_dir():
            return candidate
    return None


def upstream_crds(*subdirs: str) -> list[Path]:
    """The upstream CRD directories (all, or e.g. ``"argocd", "kargo"``) for
    ``KubeSandbox(crds=...)``; skips the calling test when they are not there."""
    import pytest

    root = shared_crds_dir()
    if root is None:
        pytest.skip(
            "the upstream CRDs are not here: expected ../shared/crds beside the checkout "
            f"(or ${CRD_DIR_VARIABLE}); see shared/crds/SOURCES.md"
        )
    paths = [root / sub for sub in subdirs] if subdirs else [root]
    missing = [str(p) for p in paths if not p.is_dir()]
    if missing:
        pytest.skip(f"upstream CRD directories missing: {', '.join(missing)}")
    return paths
