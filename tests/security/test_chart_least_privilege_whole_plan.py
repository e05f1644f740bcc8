"""The chart's least-privilege policies as a whole: every object of a plan (a project on
Argo CD + Kargo, a namespace on Flux sleeping through kube-green, the tenant's objects of both
engines) and every one a
decommission deletes passes them as Berth, and the chart ships them by default, with Berth's
RBAC, and leaves them out when told. Each test makes the request Berth would make, as Berth,
on a stand-in with the chart installed (tests/support/security_chart.py)."""

from __future__ import annotations

from typing import Any

from provisioning.plan import render
from tests.support.hibernation import KUBE_GREEN
from tests.support.plan_inputs import a_plan_input_with_every_kind
from tests.support.security_chart import (
    BERTHS,
    Cluster,
    check_chart,
    kargo_project,
    namespace,
    path_of_ref,
)


def test_every_object_of_a_plan_is_applied_and_deleted_under_the_policies(cluster: Cluster) -> None:
    """Every kind Berth applies (a project on Argo CD + Kargo, a namespace on Flux, the
    tenant's objects of both engines) and every one its decommission deletes, as Berth."""
    plan = render(a_plan_input_with_every_kind())
    for obj in plan.apply:
        if obj["kind"] == "SleepInfo" and not KUBE_GREEN.is_dir():
            continue  # an optional tool's: served where its CRD is here (tests/security/conftest)
        answer = cluster.apply(cluster.berth, obj)
        assert answer.status_code == 201, (obj["kind"], obj["metadata"], answer.text)
    # What a tenant leaving deletes that this plan did not make: made by an earlier one.
    for obj in (
        namespace("payments-old-dev", BERTHS),
        namespace("payments-old-kargo", BERTHS),
        kargo_project("payments-old-kargo", BERTHS),
    ):
        cluster.as_admin(obj)

    for ref in plan.delete:
        answer = cluster.call(cluster.berth, "DELETE", path_of_ref(ref))
        assert answer.status_code == 200, (ref, answer.text)


def test_the_policies_are_on_by_default_go_with_berths_rbac_and_can_be_left_out(
    chart: list[dict[str, Any]],
) -> None:
    policies = set(check_chart.LEAST_PRIVILEGE_POLICIES)

    def shipped(rendered: list[dict[str, Any]]) -> set[tuple[str, str]]:
        return {
            (obj["kind"], obj["metadata"]["name"])
            for obj in rendered
            if obj["metadata"]["name"] in policies
        }

    both = {(kind, name) for name in policies for kind in check_chart.ADMISSION_KINDS}
    assert shipped(chart) == both
    # Every provisioning test signs Berth in with these (tests/support/cluster.py, `make run`).
    assert shipped(check_chart.berth_rbac("berth-system")) == both
    values = check_chart.load_values(check_chart.CHART / "ci" / "default-values.yaml")
    assert (
        shipped(check_chart.render({**values, "admission": {"berthLeastPrivilege": False}}))
        == set()
    )
    # Without the Role in Argo CD's namespace there are no Secrets there to fence.
    assert shipped(check_chart.render({**values, "rbac": {"argocdRepositorySecrets": False}})) == {
        (kind, name)
        for kind in check_chart.ADMISSION_KINDS
        for name in ("berth-own-namespaces", "berth-own-objects")
    }
