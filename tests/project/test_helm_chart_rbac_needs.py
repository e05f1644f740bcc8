"""The Helm chart's RBAC is exactly what Berth needs: everything provisioning, decommissioning,
drift checks, the watcher and "Install guardrails" ask a cluster for (worked out from a plan
input with every kind Berth applies or deletes) is granted, nothing more is, and every kind
Berth may write is fenced to its own namespaces by the least-privilege admission policies.
"""

from dataclasses import replace

from provisioning import gitops_plan
from provisioning.guardrails import bootstrap_objects
from provisioning.guardrails.stamp import CHECKED_KINDS
from provisioning.jobs import truth
from provisioning.jobs.watch_streams import WATCHED_KINDS
from provisioning.plan import (
    namespace_objects,
    render,
    sleep,
)
from provisioning.plan.deploy_tokens import deploy_token_objects
from tests.support.authz import RBAC_GROUP, resource_of
from tests.support.helm_chart import BERTH, check_chart, needs_helm, rbac_rules, values
from tests.support.plan_inputs import a_plan_input_with_every_kind

pytestmark = needs_helm


def needed_requests(berth_namespace: str) -> set[tuple[str, str, str, str, str]]:
    """(verb, group, resource, namespace, name) of everything Berth asks a cluster for."""
    inputs = a_plan_input_with_every_kind()
    plan = render(inputs)
    needed = set()

    def ask(obj: dict, *verbs: str) -> None:
        group, resource = resource_of(obj["apiVersion"], obj["kind"])
        meta = obj["metadata"]
        for verb in verbs:
            needed.add((verb, group, resource, meta.get("namespace", ""), meta["name"]))

    for obj in plan.apply:  # server-side apply: read, then a patch that creates when missing
        ask(obj, "get", "create", "patch")
        if obj["kind"] == "RoleBinding":  # engine.apply_object: a changed roleRef is recreated
            ask(obj, "delete")
            if obj["roleRef"]["kind"] == "ClusterRole":
                needed.add(("bind", RBAC_GROUP, "clusterroles", "", obj["roleRef"]["name"]))
        if obj["kind"] == "Role":  # who writes a Role must hold what it grants
            for rule in obj["rules"]:
                for group in rule["apiGroups"]:
                    for resource in rule["resources"]:
                        for verb in rule["verbs"]:
                            needed.add(
                                (
                                    verb,
                                    group,
                                    resource,
                                    obj["metadata"]["namespace"],
                                    (rule.get("resourceNames") or [""])[0],
                                )
                            )
    for ref in plan.delete:  # decommission
        ask(
            {"apiVersion": ref.api_version, "kind": ref.kind, "metadata": vars(ref)},
            "get",
            "delete",
        )
    for obj in namespace_objects(inputs, inputs.namespaces[1]):  # drift: the reconcile reads each
        if obj["kind"] != "Namespace":
            group, resource = resource_of(obj["apiVersion"], obj["kind"])
            needed.add(("list", group, resource, obj["metadata"]["namespace"], ""))
    needed.add(("list", "", "namespaces", "", ""))  # a registered cluster's namespaces
    for api_version, kind in WATCHED_KINDS:  # the watcher: all namespaces, list then watch
        group, resource = resource_of(api_version, kind)
        needed.update({("list", group, resource, "", ""), ("watch", group, resource, "", "")})
    # Before a change: are the guardrails there, current and whole (reconcile.guardrails)?
    # And the watcher watches them.
    for api_version, kind in CHECKED_KINDS:
        group, resource = resource_of(api_version, kind)
        needed.update({("list", group, resource, "", ""), ("watch", group, resource, "", "")})
    # The truth table reads the status of what the engines reconcile from the tenant's files.
    for obj in gitops_plan.cluster_objects(
        gitops_plan.render_files(replace(inputs, app="shop", kargo_namespace="payments-shop-kargo"))
    ):
        if (obj["apiVersion"].split("/")[0], obj["kind"]) in truth.ENGINE_KINDS:
            ask(obj, "get")
    # A deploy token (reconcile.deploy_tokens): its ServiceAccount and binding applied, a token
    # asked of it, both removed when it is revoked or expires.
    tokened = inputs.namespaces[0]
    for obj in deploy_token_objects(
        namespace=tokened.name,
        service_account="berth-deploy-0123456789",
        cluster_role=tokened.tier.cluster_roles["member"],
        tenant=inputs.tenant.slug,
        token_id=1,
    ):
        ask(obj, "get", "create", "patch", "delete")
    needed.add(("create", "", "serviceaccounts/token", tokened.name, "berth-deploy-0123456789"))
    # Hibernation (reconcile.hibernation): a namespace's workloads listed and patched to sleep
    # and back, the team's Applications and Kustomizations deploying there paused, a
    # SleepInfo no schedule wants removed.
    asleep = inputs.namespaces[0].name
    for (api_version, kind), where in [
        *[(workload, asleep) for workload in sleep.WORKLOADS],
        (sleep.CRONJOBS, asleep),
        (sleep.APPLICATIONS, inputs.tenant.apps_namespace),
        (sleep.KUSTOMIZATIONS, inputs.tenant.gitops_namespace),
    ]:
        group, resource = resource_of(api_version, kind)
        needed.update(
            {("list", group, resource, where, ""), ("patch", group, resource, where, "x")}
        )
    ask(
        {
            "apiVersion": sleep.SLEEP_INFO_KIND[0],
            "kind": sleep.SLEEP_INFO_KIND[1],
            "metadata": {"name": sleep.SLEEP_INFO, "namespace": asleep},
        },
        "get",
        "delete",
    )
    bootstrap = bootstrap_objects(inputs.cluster, berth_namespace=berth_namespace)
    for obj in bootstrap:  # "Install guardrails"
        ask(obj, "get", "create", "patch")
        if obj["kind"] == "ClusterRole":
            ask(obj, "escalate")
    return needed


def test_berth_may_do_everything_provisioning_and_the_guardrails_need(ask):
    rendered = check_chart.render(values())
    authorizer = ask(rendered)

    refused = [
        request
        for request in sorted(needed_requests(check_chart.NAMESPACE))
        if not authorizer.can_i(BERTH, *request)
    ]

    assert refused == []


def test_berth_may_do_nothing_more(ask):
    """Every (verb, group, resource) the rules grant is one Berth uses: no spare rights."""
    rendered = check_chart.render(values())
    granted = {
        (verb, group, resource)
        for rule in rbac_rules(rendered)
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
    }
    used = {request[:3] for request in needed_requests(check_chart.NAMESPACE)}

    assert granted == used
    authorizer = ask(rendered)
    for denied in (
        ("get", "", "secrets", "payments-shop-dev", "anything"),
        ("create", RBAC_GROUP, "clusterrolebindings", "", "anything"),
        ("delete", "", "resourcequotas", "payments-shop-dev", "berth-quota"),
        ("patch", RBAC_GROUP, "clusterroles", "", "cluster-admin"),
        ("get", "", "secrets", "kube-system", "anything"),
        ("patch", RBAC_GROUP, "roles", "payments-shop-dev", "admin"),
    ):
        assert not authorizer.can_i(BERTH, *denied), denied


# What only the least-privilege policies keep to Berth's own: namespaces (own-namespaces),
# and the cluster-wide objects "Install guardrails" writes, by name.
FENCED_BY_NAME = {
    ("", "namespaces"),
    (RBAC_GROUP, "clusterroles"),
    ("admissionregistration.k8s.io", "validatingadmissionpolicies"),
    ("admissionregistration.k8s.io", "validatingadmissionpolicybindings"),
}
WRITES = {"create", "update", "patch", "delete", "deletecollection"}


def test_every_kind_berth_may_write_is_fenced_to_its_own_namespaces(rendered):
    """A kind added to the ClusterRole or Argo CD's Role without the own-objects policy
    matching it could be written in any namespace (kube-system included)."""
    policy = {
        obj["kind"]: obj for obj in rendered if obj["metadata"]["name"] == "berth-own-objects"
    }
    assert set(policy) == {"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"}
    matched = {
        (group, resource)
        for rule in policy["ValidatingAdmissionPolicy"]["spec"]["matchConstraints"]["resourceRules"]
        if {"CREATE", "UPDATE", "DELETE"} <= set(rule["operations"])
        for group in rule["apiGroups"]
        for resource in rule["resources"]
    }
    writable = {
        (group, resource)
        for rule in rbac_rules(rendered)
        if WRITES & set(rule["verbs"])
        for group in rule["apiGroups"]
        for resource in rule["resources"]
    }

    assert writable - FENCED_BY_NAME <= matched
    # And every kind a plan applies or deletes is among them.
    plan = render(a_plan_input_with_every_kind())
    kinds = {resource_of(obj["apiVersion"], obj["kind"]) for obj in plan.apply}
    kinds |= {resource_of(ref.api_version, ref.kind) for ref in plan.delete}
    assert kinds - {("", "namespaces")} <= matched
