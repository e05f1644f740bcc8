"""The Helm chart's RBAC for Berth, rendered by Helm's own engine and asked of an API server
holding it (the `ask` fixture), as `kubectl auth can-i --as` would: no wildcards, bind and
escalate only on named cluster roles (the bindable ones from values), and what turning off
guardrail installs or Argo CD's repository secrets takes away.
"""

from tests.support.authz import RBAC_GROUP
from tests.support.helm_chart import BERTH, EDIT, check_chart, needs_helm, rbac_rules, values

pytestmark = needs_helm


def test_the_rbac_rules_have_no_wildcards(rendered):
    for rule in rbac_rules(rendered):
        for field in ("apiGroups", "resources", "verbs", "resourceNames", "nonResourceURLs"):
            assert not any("*" in item for item in rule.get(field, [])), rule


def test_bind_and_escalate_are_limited_to_named_cluster_roles(rendered, ask):
    for rule in rbac_rules(rendered):
        if {"bind", "escalate"} & set(rule["verbs"]):
            assert rule["resources"] == ["clusterroles"] and rule["resourceNames"], rule
        assert "impersonate" not in rule["verbs"], rule
        if set(rule["resources"]) & {"roles", "clusterroles"} and set(rule["verbs"]) - {
            "get",
            "list",
            "watch",
        }:  # writes: named roles only
            assert rule.get("resourceNames"), rule
    authorizer = ask(rendered)
    for role in ("cluster-admin", "admin", "system:controller:namespace-controller"):
        assert not authorizer.can_i(BERTH, "bind", RBAC_GROUP, "clusterroles", name=role)
        assert not authorizer.can_i(BERTH, "escalate", RBAC_GROUP, "clusterroles", name=role)


def test_the_bindable_roles_come_from_values(ask):
    custom = {**values(), "rbac": {"bindableClusterRoles": ["edit", "view", "tenant-reader"]}}
    rendered = check_chart.render(custom)
    authorizer = ask(rendered)

    (rule,) = [r for r in rbac_rules(rendered) if "bind" in r["verbs"]]
    # The tiers' roles, and the roles Berth's own GitOps bindings need.
    assert rule["resourceNames"] == [
        "edit",
        "view",
        "tenant-reader",
        "berth-flux-reconciler",
        "berth-argocd-applications",
        "kargo-viewer",
    ]
    assert authorizer.can_i(BERTH, "bind", RBAC_GROUP, "clusterroles", name="tenant-reader")
    assert not authorizer.can_i(BERTH, "bind", RBAC_GROUP, "clusterroles", name="admin")


def test_without_guardrail_installs_berth_cannot_touch_roles_or_admission(ask):
    rendered = check_chart.render({**values(), "rbac": {"installGuardrails": False}})
    authorizer = ask(rendered)

    assert [obj["metadata"]["name"] for obj in rendered if obj["kind"] == "Role"] == [
        "berth-argocd-repositories"
    ]
    assert not authorizer.can_i(BERTH, "escalate", RBAC_GROUP, "clusterroles", name=EDIT)
    assert not authorizer.can_i(
        BERTH,
        "create",
        "admissionregistration.k8s.io",
        "validatingadmissionpolicies",
        name="berth-protect-managed",
    )
    assert authorizer.can_i(BERTH, "bind", RBAC_GROUP, "clusterroles", name=EDIT)


def test_argo_cds_repository_secrets_are_a_role_in_its_namespace_and_can_be_left_out(ask):
    rendered = check_chart.render(values())
    authorizer = ask(rendered)
    assert authorizer.can_i(BERTH, "patch", "", "secrets", "argocd", "berth-repo-payments")
    assert not authorizer.can_i(BERTH, "patch", "", "secrets", "payments-shop-dev", "x")
    without = check_chart.render({**values(), "rbac": {"argocdRepositorySecrets": False}})
    assert not ask(without).can_i(BERTH, "patch", "", "secrets", "argocd", "berth-repo-payments")
