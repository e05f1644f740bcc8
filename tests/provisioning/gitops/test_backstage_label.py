"""The label Backstage's Kubernetes plugin finds a project's workloads by: Berth's base
skeleton carries it (kustomize `labels`), so what the team adds to its base and every
environment's overlay build from it come out labelled, pod templates included, with their
selectors left as the team wrote them (a Deployment's selector cannot change once made)."""

from __future__ import annotations

import pytest
import yaml

from provisioning import gitops_plan
from tests.support.gitops_rendering import ENGINES, inputs
from tests.support.gitops_roots import kustomize

DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web"},
    "spec": {
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
        },
    },
}


@pytest.mark.processes  # kubectl kustomize
def test_every_overlay_builds_the_teams_workloads_with_the_projects_kubernetes_id(tmp_path):
    for engine in ENGINES:
        root = tmp_path / engine
        for path, content in gitops_plan.render_files(inputs(engine, ("dev", "prod"))).items():
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_text(content)
        base = next(root.glob("**/shop/base"))
        skeleton = yaml.safe_load((base / "kustomization.yaml").read_text())
        (base / "web.yaml").write_text(yaml.safe_dump(DEPLOYMENT))
        (base / "kustomization.yaml").write_text(
            yaml.safe_dump({**skeleton, "resources": ["web.yaml"]})  # what the team adds
        )
        overlays = sorted(base.parent.glob("overlays/*"))
        assert [o.name for o in overlays] == ["dev", "prod"], engine
        for overlay in overlays:
            (built,) = kustomize(overlay)
            assert built["metadata"]["namespace"] == f"payments-shop-{overlay.name}"
            assert built["metadata"]["labels"]["backstage.io/kubernetes-id"] == "payments-shop"
            template = built["spec"]["template"]["metadata"]["labels"]
            assert template == {"app": "web", "backstage.io/kubernetes-id": "payments-shop"}
            assert built["spec"]["selector"] == {"matchLabels": {"app": "web"}}
