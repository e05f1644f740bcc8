"""The Helm chart in deploy/helm/berth, rendered by Helm's own engine (tests/support/helm_chart.py
says which): it lints clean and every object it renders validates against the Kubernetes
schema with each CI values file; values it cannot work with fail the render saying what to
set; the Flux tenancy admission policy it ships is the one "Install guardrails" applies.
Its workloads and its RBAC have modules of their own (test_helm_chart_workloads.py,
test_helm_chart_rbac.py, test_helm_chart_rbac_needs.py).
"""

import pytest

from provisioning.guardrails import FLUX_POLICY, binding, flux_policy
from provisioning.plan import GITOPS_SOURCES_CONFIG
from provisioning.schema import validate_objects
from tests.support.helm_chart import ENGINE, VALUES_FILES, check_chart, needs_helm, values

pytestmark = needs_helm


def test_the_chart_lints_clean_with_every_ci_values_file():
    for name, path in VALUES_FILES.items():
        assert check_chart.lint(check_chart.load_values(path)) == [], f"{name} ({ENGINE})"


def test_every_rendered_object_validates_against_the_kubernetes_schema(rendered):
    assert validate_objects(rendered) == {}


def test_a_missing_secret_value_fails_the_render_with_what_to_set():
    with pytest.raises(Exception, match="secret.fernetKeys is required"):
        check_chart.render({"secret": {**values()["secret"], "fernetKeys": ""}})


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"serviceAccount": {"create": True, "name": "portal"}}, "serviceAccount.name berth"),
        ({"config": {"berthNamespace": "elsewhere"}}, "config.berthNamespace"),
    ],
)
def test_guardrail_installs_need_berths_service_account_in_berths_namespace(override, message):
    with pytest.raises(Exception, match=message):
        check_chart.render({**values(), **override})


def test_the_charts_flux_policy_is_the_one_install_guardrails_applies():
    rendered = check_chart.render(values())
    shipped = {obj["kind"]: obj for obj in rendered if obj["metadata"]["name"] == FLUX_POLICY}
    assert shipped["ValidatingAdmissionPolicy"]["spec"] == flux_policy()["spec"]
    assert (
        shipped["ValidatingAdmissionPolicyBinding"]["spec"]
        == binding(FLUX_POLICY, param=GITOPS_SOURCES_CONFIG)["spec"]
    )
    assert (
        shipped["ValidatingAdmissionPolicy"]["metadata"]["labels"]["app.kubernetes.io/managed-by"]
        == "Helm"
    )
    off = check_chart.render({**values(), "admission": {"fluxTenancy": False}})
    assert not [obj for obj in off if obj["metadata"]["name"] == FLUX_POLICY]
