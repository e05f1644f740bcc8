"""provisioning.schema: a CRD's structural schema, translated offline into a validator
(no Django, no database): types, int-or-string, nullable, patterns, enums, defaults,
preserved unknown fields, embedded resources, served versions and scope; a kind defined
twice is refused."""

import copy

import pytest

from provisioning.schema import validate_object
from tests.support.schema_objects import NS, paths

TOY_CRD = """\
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: toys.example.com
spec:
  group: example.com
  names: {kind: Toy, plural: toys}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          apiVersion: {type: string}
          kind: {type: string}
          metadata: {type: object}
          spec:
            type: object
            required: [size, mode]
            x-kubernetes-validations:
            - rule: self.size != 'never'
            properties:
              size: {x-kubernetes-int-or-string: true}
              mode: {type: string, default: fast, enum: [fast, slow]}
              note: {type: string, nullable: true}
              code: {type: string, pattern: '^\\w+$'}
              extra: {type: object, x-kubernetes-preserve-unknown-fields: true}
              labels: {type: object, additionalProperties: {type: string}}
              empty: {type: object}
              template:
                type: object
                x-kubernetes-embedded-resource: true
                properties:
                  spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
  - name: v0
    served: false
    storage: false
    schema:
      openAPIV3Schema: {type: object}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: globals.example.com
spec:
  group: example.com
  names: {kind: Global, plural: globals}
  scope: Cluster
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          apiVersion: {type: string}
          kind: {type: string}
          metadata: {type: object}
"""


def test_structural_schema_translation(tmp_path):
    (tmp_path / "toys.yml").write_text(TOY_CRD)
    toy = {
        "apiVersion": "example.com/v1",
        "kind": "Toy",
        "metadata": {"name": "t", "namespace": NS},
        "spec": {
            "size": "never",  # CEL rules are not evaluated
            "note": None,  # nullable
            "code": "abc_1",
            "extra": {"free": {"form": [1, 2]}},
            "labels": {"a": "b"},
            "empty": {},
            "template": {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "p"},
                "spec": {"containers": []},
            },
        },
    }
    assert validate_object(toy, crd_dir=tmp_path) == []
    toy["spec"].update(size=3, mode="slow")
    assert validate_object(toy, crd_dir=tmp_path) == []

    bad = copy.deepcopy(toy)
    bad["spec"].update(size=[3], code="åbc", labels={"a": 1}, empty={"x": 1}, mode="medium", sise=1)
    bad["spec"]["template"]["bogus"] = True
    assert sorted(paths(validate_object(bad, crd_dir=tmp_path))) == [
        "spec.code",  # \\w is ASCII, as in Go
        "spec.empty.x",
        "spec.labels.a",
        "spec.mode",
        "spec.sise",
        "spec.size",
        "spec.template.bogus",
    ]
    del bad["spec"]["size"]
    assert "spec.size" in paths(validate_object(bad, crd_dir=tmp_path))

    assert paths(validate_object({**toy, "apiVersion": "example.com/v0"}, crd_dir=tmp_path)) == [
        "apiVersion"
    ]
    glob = {"apiVersion": "example.com/v1", "kind": "Global", "metadata": {"name": "g"}}
    assert validate_object(glob, crd_dir=tmp_path) == []
    glob["metadata"]["namespace"] = NS
    assert paths(validate_object(glob, crd_dir=tmp_path)) == ["metadata.namespace"]


def test_duplicate_crds_are_refused(tmp_path):
    (tmp_path / "a.yaml").write_text(TOY_CRD)
    (tmp_path / "b.yaml").write_text(TOY_CRD)
    with pytest.raises(ValueError, match="defined twice"):
        validate_object({"apiVersion": "example.com/v1", "kind": "Toy"}, crd_dir=tmp_path)
