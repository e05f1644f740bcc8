"""Which CRDs `make run`'s sandbox cluster gets, and that it says so (portal/sandbox.py)."""

from __future__ import annotations

from portal import sandbox


def test_berth_crd_dir_gives_the_sandbox_the_upstream_crds_and_make_run_says_from_where(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("BERTH_CRD_DIR", str(tmp_path))
    found = sandbox.upstream_crd_dir()
    assert found == tmp_path.resolve()
    said = sandbox.crds_said({"upstream_crds": True, "crds": found})
    assert said == f"CRDs: upstream from {tmp_path.resolve()}"


def test_without_upstream_crds_make_run_says_its_sandbox_has_stand_ins(tmp_path, monkeypatch):
    monkeypatch.setenv("BERTH_CRD_DIR", str(tmp_path / "missing"))
    assert sandbox.upstream_crd_dir() is None
    said = sandbox.crds_said({"upstream_crds": False, "crds": tmp_path / "crd-standins.yaml"})
    assert said == "CRDs: Berth's stand-ins (set BERTH_CRD_DIR for the upstream ones)"
