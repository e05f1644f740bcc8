"""Berth's ValidatingAdmissionPolicies as objects: they validate against the Kubernetes
schema, and every CEL expression in them is standard CEL, which both cel-go (Kubernetes)
and cel-python evaluate alike."""

import re

import celpy
import pytest

from provisioning.schema import validate_object, validate_objects
from tests.support.guardrails_admission import BOOTSTRAP


def policies():
    return [o for o in BOOTSTRAP if o["kind"] == "ValidatingAdmissionPolicy"]


def test_the_policy_objects_validate_against_the_kubernetes_schema():
    admission = [o for o in BOOTSTRAP if o["apiVersion"].startswith("admissionregistration")]
    assert {o["kind"] for o in admission} == {
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
    }
    assert validate_objects(admission) == {}
    broken = {**policies()[0], "spec": {**policies()[0]["spec"], "validations": [{"expr": "x"}]}}
    assert [str(e) for e in validate_object(broken)] == [
        "spec.validations[0].expr: unknown field 'expr' (V1Validation)",
        "spec.validations[0].expression: required field is missing",
    ]


def expressions():
    for policy in policies():
        spec = policy["spec"]
        for item in [
            *spec.get("validations", []),
            *spec.get("matchConditions", []),
            *spec.get("variables", []),
        ]:
            yield policy["metadata"]["name"], item["expression"]


# Standard CEL that both cel-go (Kubernetes) and cel-python evaluate alike. Kubernetes'
# extension libraries (strings.split, lowerAscii, lists, optional `?.`, ...) are left out:
# cel-python 0.5 does not know them.
STANDARD_CEL = {"has", "all", "exists", "endsWith", "size"}


@pytest.mark.parametrize(("policy", "expression"), list(expressions()))
def test_every_expression_is_standard_cel_that_cel_python_compiles(policy, expression):
    environment = celpy.Environment()
    environment.compile(expression)
    called = set(re.findall(r"([A-Za-z_]\w*)\s*\(", expression))
    assert called <= STANDARD_CEL, f"{policy}: {called - STANDARD_CEL}"
    assert "?." not in expression and ".?" not in expression
