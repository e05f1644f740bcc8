"""A process starts many stand-ins from the same CRDs: the second starts from what the first
seeded, copied, and the two share nothing after."""

from __future__ import annotations

from pathlib import Path

import requests
import yaml

from kubesandbox import KubeSandbox


def widget_crd(kind: str = "Widget") -> dict:
    plural = f"{kind.lower()}s"
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"kind": kind, "plural": plural, "singular": kind.lower()},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "x-kubernetes-preserve-unknown-fields": True,
                        }
                    },
                }
            ],
        },
    }


def widget(name: str, kind: str = "Widget") -> dict:
    return {
        "apiVersion": "example.com/v1",
        "kind": kind,
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"size": 1},
    }


def crds_in(folder: Path, *kinds: str) -> Path:
    folder.mkdir(exist_ok=True)
    (folder / "crds.yaml").write_text(yaml.safe_dump_all([widget_crd(kind) for kind in kinds]))
    return folder


def test_a_second_stand_in_starts_from_the_first_ones_seed_and_shares_nothing(tmp_path):
    crds = crds_in(tmp_path / "crds", "Widget")
    with KubeSandbox(crds=[crds]) as first:
        seeded_at = first.store.resource_version
        first.upsert(widget("only-in-first"))
        first.upsert({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}})
        with KubeSandbox(crds=[crds]) as second:
            assert second.store.resource_version == seeded_at
            # The CRD is there, established, and its type served: a widget can be made.
            crd = second.get("CustomResourceDefinition", "widgets.example.com")
            assert {c["type"] for c in crd["status"]["conditions"]} >= {"Established"}
            second.upsert(widget("only-in-second"))
            names = {w["metadata"]["name"] for w in second.objects("Widget", "default")}
            assert names == {"only-in-second"}
            assert second.get("Namespace", "team-a") is None
            # Its watch history is the seed's: a watch from the start sees the CRD added.
            assert any(
                event.type == "ADDED" and event.key[3] == "widgets.example.com"
                for event in second.store.events.since(0)
            )
        names = {w["metadata"]["name"] for w in first.objects("Widget", "default")}
        assert names == {"only-in-first"}
    with KubeSandbox(crds=[crds]) as third:
        assert third.objects("Widget", "default") == []
        assert third.get("Namespace", "team-a") is None


def test_changed_manifests_are_seeded_afresh(tmp_path):
    crds = crds_in(tmp_path / "crds", "Widget")
    with KubeSandbox(crds=[crds]) as before:
        assert before.get("CustomResourceDefinition", "gadgets.example.com") is None
    crds_in(crds, "Widget", "Gadget")
    with KubeSandbox(crds=[crds]) as after:
        assert after.get("CustomResourceDefinition", "gadgets.example.com")
        after.upsert(widget("g", kind="Gadget"))


def test_a_reset_seeds_again_and_keeps_counting(tmp_path):
    crds = crds_in(tmp_path / "crds", "Widget")
    with KubeSandbox(crds=[crds]) as sandbox:
        sandbox.upsert(widget("gone-after-reset"))
        before = sandbox.store.resource_version
        sandbox.reset()
        assert sandbox.store.resource_version > before
        assert sandbox.objects("Widget", "default") == []
        sandbox.upsert(widget("after-reset"))


def test_a_reset_puts_back_a_crd_a_test_changed_or_deleted_and_serves_no_other(tmp_path):
    """A reset keeps the seeded CRDs when nothing changed them; one changed, deleted or
    added since is put back as seeded, its types with it."""
    crds = crds_in(tmp_path / "crds", "Widget")
    with KubeSandbox(crds=[crds]) as sandbox:
        sandbox.reset()  # nothing changed: the same CRD, still serving its kind
        sandbox.upsert(widget("kept"))
        sandbox.reset()
        assert sandbox.objects("Widget", "default") == []

        changed = sandbox.get("CustomResourceDefinition", "widgets.example.com")
        changed["metadata"].setdefault("labels", {})["edited"] = "by-a-test"
        sandbox.upsert(changed)
        sandbox.upsert(widget_crd("Gadget"))
        sandbox.reset()
        widgets = sandbox.get("CustomResourceDefinition", "widgets.example.com")
        assert "edited" not in (widgets["metadata"].get("labels") or {})
        assert sandbox.get("CustomResourceDefinition", "gadgets.example.com") is None
        assert "gadgets" not in {rt.plural for rt in sandbox.store.registry.all()}

        requests.delete(
            f"{sandbox.url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com",
            headers={"Authorization": f"Bearer {sandbox.token}"},
            timeout=10,
        ).raise_for_status()
        assert sandbox.get("CustomResourceDefinition", "widgets.example.com") is None
        sandbox.reset()
        sandbox.upsert(widget("served-again"))
        assert [w["metadata"]["name"] for w in sandbox.objects("Widget", "default")] == [
            "served-again"
        ]
