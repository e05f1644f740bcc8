"""Conformance of ``kubectl explain``: from the OpenAPI v3 documents (kubectl's default) and from
``/openapi/v2`` in protobuf (``--output=plaintext-openapiv2``), for a built-in kind and for a
custom resource of the upstream Argo CD CRDs."""

from __future__ import annotations

import pytest

from .kubectl_support import Kubectl, needs_kubectl

pytestmark = [needs_kubectl, pytest.mark.processes, pytest.mark.crds]

V2 = "--output=plaintext-openapiv2"


@pytest.fixture
def sandbox_options() -> dict:
    return {"tls": True}


def test_explain_a_built_in_field_from_v3_and_v2(kubectl: Kubectl) -> None:
    assert kubectl.ok("explain", "deployment.spec.replicas").splitlines() == [
        "GROUP:      apps",
        "KIND:       Deployment",
        "VERSION:    v1",
        "",
        "FIELD: replicas <integer>",
        "",
        "",
        "DESCRIPTION:",
        "    Number of desired pods. This is a pointer to distinguish between explicit",
        "    zero and not specified. Defaults to 1.",
        "    ",
        "",
    ]
    assert kubectl.ok("explain", "deployment.spec.replicas", V2).splitlines() == [
        "KIND:     Deployment",
        "VERSION:  apps/v1",
        "",
        "FIELD:    replicas <integer>",
        "",
        "DESCRIPTION:",
        "     Number of desired pods. This is a pointer to distinguish between explicit",
        "     zero and not specified. Defaults to 1.",
    ]


def test_explain_a_custom_resources_field_from_v3_and_v2(kubectl: Kubectl) -> None:
    v3 = kubectl.ok("explain", "appproject.spec").splitlines()
    assert v3[:9] == [
        "GROUP:      argoproj.io",
        "KIND:       AppProject",
        "VERSION:    v1alpha1",
        "",
        "FIELD: spec <Object>",
        "",
        "",
        "DESCRIPTION:",
        "    AppProjectSpec is the specification of an AppProject",
    ]
    assert "FIELDS:" in v3
    assert "  destinations\t<[]Object>" in v3
    assert "  sourceRepos\t<[]string>" in v3
    v2 = kubectl.ok("explain", "appproject.spec", V2).splitlines()
    assert v2[:7] == [
        "KIND:     AppProject",
        "VERSION:  argoproj.io/v1alpha1",
        "",
        "RESOURCE: spec <Object>",
        "",
        "DESCRIPTION:",
        "     AppProjectSpec is the specification of an AppProject",
    ]
    assert "   destinations\t<[]Object>" in v2
    assert "   sourceRepos\t<[]string>" in v2
    whole = kubectl.ok("explain", "appproject", V2)
    assert "metadata\t<Object> -required-" in whole and "spec\t<Object> -required-" in whole
    # Deeper fields, recursively: the v2 document parses for every kind.
    recursive = kubectl.ok("explain", "application.spec.syncPolicy", "--recursive", V2)
    assert "selfHeal\t<boolean>" in recursive


def test_explain_unknown_field_is_refused_as_kubectl_words_it(kubectl: Kubectl) -> None:
    stderr = kubectl.refused("explain", "appproject.spec.colour")
    assert 'field "colour" does not exist' in stderr
