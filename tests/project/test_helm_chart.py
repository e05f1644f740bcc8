"""The Helm chart in deploy/helm/berth, rendered by Helm's own engine and checked object by object.

Rendered with the `helm` binary when one is on PATH, else with the helm-python-sdk package
(Helm's Go engine as a library, a dev dependency); skipped, saying why, with neither.
"""

import importlib.util
from dataclasses import replace
from pathlib import Path

import pytest

from provisioning import gitops_plan
from provisioning.guardrails import (
    BERTH_ROLES,
    FLUX_POLICY,
    binding,
    bootstrap_objects,
    flux_policy,
)
from provisioning.guardrails.stamp import CHECKED_KINDS
from provisioning.jobs import truth
from provisioning.jobs.watch_streams import WATCHED_KINDS
from provisioning.plan import (
    GITOPS_SOURCES_CONFIG,
    namespace_objects,
    render,
)
from provisioning.plan.deploy_tokens import deploy_token_objects
from provisioning.schema import validate_objects
from tests.support.authz import RBAC_GROUP, LiveCluster, Subject, resource_of
from tests.support.plan_inputs import a_plan_input_with_every_kind

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("check_chart", ROOT / "deploy/helm/check_chart.py")
check_chart = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_chart)

try:
    ENGINE = check_chart.describe_engine()
except check_chart.HelmUnavailable as exc:
    pytestmark = pytest.mark.skip(reason=f"cannot render the Helm chart: {exc}")
    ENGINE = ""

VALUES_FILES = {path.stem: path for path in check_chart.CI_VALUES}
WORKLOADS = ("Deployment", "Job")
# Who Berth is on the cluster it runs in: the chart's ServiceAccount in the release namespace.
BERTH = Subject.service_account(check_chart.NAMESPACE, "berth")
EDIT = BERTH_ROLES[0]


RBAC_KINDS = {"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"}


@pytest.fixture
def ask():
    """An API server holding a rendering's RBAC (what `helm install -n berth` would make):
    ask it what Berth may do, as `kubectl auth can-i --as` would."""
    started = []

    def holding(rendered: list[dict]) -> LiveCluster:
        objects = []
        for obj in rendered:
            if obj["kind"] in RBAC_KINDS:
                if obj["kind"] in {"ServiceAccount", "Role", "RoleBinding"}:
                    obj = {
                        **obj,
                        "metadata": {"namespace": check_chart.NAMESPACE, **obj["metadata"]},
                    }
                objects.append(obj)
        started.append(LiveCluster(objects, namespaces=(check_chart.NAMESPACE, "argocd")))
        return started[-1]

    yield holding
    for cluster in started:
        cluster.close()


def values(name: str = "default-values") -> dict:
    return check_chart.load_values(VALUES_FILES[name])


@pytest.fixture(scope="module", params=sorted(VALUES_FILES))
def rendered(request) -> list[dict]:
    return check_chart.render(values(request.param))


def objects_of(rendered: list[dict], kind: str) -> list[dict]:
    return [obj for obj in rendered if obj["kind"] == kind]


def cluster_role(rendered: list[dict]) -> dict:
    (role,) = objects_of(rendered, "ClusterRole")
    return role


def pod_specs(rendered: list[dict]) -> dict[str, dict]:
    return {
        obj["metadata"]["name"]: obj["spec"]["template"]["spec"]
        for obj in rendered
        if obj["kind"] in WORKLOADS
    }


def test_the_chart_lints_clean_with_every_ci_values_file():
    for name, path in VALUES_FILES.items():
        assert check_chart.lint(check_chart.load_values(path)) == [], f"{name} ({ENGINE})"


def test_every_rendered_object_validates_against_the_kubernetes_schema(rendered):
    assert validate_objects(rendered) == {}


def rbac_rules(rendered: list[dict]) -> list[dict]:
    return [
        rule for obj in rendered if obj["kind"] in ("ClusterRole", "Role") for rule in obj["rules"]
    ]


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
    for obj in namespace_objects(inputs, inputs.namespaces[1]):  # drift: engine.find_drift
        if obj["kind"] != "Namespace":
            group, resource = resource_of(obj["apiVersion"], obj["kind"])
            needed.add(("list", group, resource, obj["metadata"]["namespace"], ""))
    needed.add(("list", "", "namespaces", "", ""))  # a registered cluster's namespaces
    for api_version, kind in WATCHED_KINDS:  # the watcher: all namespaces, list then watch
        group, resource = resource_of(api_version, kind)
        needed.update({("list", group, resource, "", ""), ("watch", group, resource, "", "")})
    # Before a tenant namespace: are the guardrails there and current (engine.guardrails)?
    for api_version, kind in CHECKED_KINDS:
        group, resource = resource_of(api_version, kind)
        needed.add(("list", group, resource, "", ""))
    # The truth table reads the status of what the engines reconcile from the tenant's files.
    for obj in gitops_plan.cluster_objects(
        gitops_plan.render_files(replace(inputs, app="shop", kargo_namespace="payments-shop-kargo"))
    ):
        if (obj["apiVersion"].split("/")[0], obj["kind"]) in truth.ENGINE_KINDS:
            ask(obj, "get")
    # A deploy token (jobs.deploy_tokens): its ServiceAccount and binding applied, a token
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


def test_deployments_and_the_job_run_as_non_root_on_a_read_only_root(rendered):
    specs = pod_specs(rendered)
    assert len(specs) == 5  # web, worker, beat, watcher, migrate
    for name, spec in specs.items():
        pod = spec["securityContext"]
        assert pod["runAsNonRoot"] is True and pod["runAsUser"] == 10001, name
        assert pod["seccompProfile"]["type"] == "RuntimeDefault", name
        for container in spec["containers"]:
            security = container["securityContext"]
            assert security["readOnlyRootFilesystem"] is True, name
            assert security["allowPrivilegeEscalation"] is False, name
            assert security["capabilities"]["drop"] == ["ALL"], name
            assert security["runAsNonRoot"] is True and security["runAsUser"] == 10001, name
            mounts = {mount["mountPath"] for mount in container["volumeMounts"]}
            assert {"/tmp", "/var/lib/berth"} <= mounts, name  # noqa: S108 - the pod's emptyDir
        assert all("emptyDir" in volume for volume in spec["volumes"]), name


def test_the_migrations_job_is_a_pre_install_and_pre_upgrade_hook(rendered):
    (job,) = objects_of(rendered, "Job")
    annotations = job["metadata"]["annotations"]
    assert set(annotations["helm.sh/hook"].split(",")) == {"pre-install", "pre-upgrade"}
    assert job["spec"]["template"]["spec"]["containers"][0]["command"][-2:] == [
        "migrate",
        "--noinput",
    ]
    # What the Job reads must exist before it: hooks with a lower weight (or an existing Secret).
    for settings in objects_of(rendered, "ConfigMap") + objects_of(rendered, "Secret"):
        assert int(settings["metadata"]["annotations"]["helm.sh/hook-weight"]) < int(
            annotations["helm.sh/hook-weight"]
        )


def test_web_has_probes_and_beat_runs_alone(rendered):
    deployments = {obj["metadata"]["name"]: obj for obj in objects_of(rendered, "Deployment")}
    web = deployments["berth-web"]["spec"]["template"]["spec"]["containers"][0]
    assert web["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert web["livenessProbe"]["httpGet"]["path"] == "/healthz"
    beat = deployments["berth-beat"]["spec"]
    assert beat["replicas"] == 1 and beat["strategy"] == {"type": "Recreate"}


def test_the_watcher_runs_beside_a_standby_and_is_restarted_when_its_heartbeat_stops(rendered):
    deployments = {obj["metadata"]["name"]: obj for obj in objects_of(rendered, "Deployment")}
    watcher = deployments["berth-watcher"]["spec"]
    container = watcher["template"]["spec"]["containers"][0]
    assert container["command"][:3] == ["python", "manage.py", "watch_clusters"]
    assert "--heartbeat-file=/var/lib/berth/watcher-alive" in container["command"]
    assert "/var/lib/berth/watcher-alive" in " ".join(container["livenessProbe"]["exec"]["command"])
    assert watcher["replicas"] == 2
    assert watcher["template"]["spec"]["automountServiceAccountToken"] is True


def test_web_and_worker_have_disruption_budgets_and_autoscalers():
    rendered = check_chart.render(values())
    budgets = {obj["metadata"]["name"] for obj in objects_of(rendered, "PodDisruptionBudget")}
    scalers = objects_of(rendered, "HorizontalPodAutoscaler")
    assert budgets == {"berth-web", "berth-worker"}
    assert {hpa["spec"]["scaleTargetRef"]["name"] for hpa in scalers} == budgets
    assert all(hpa["apiVersion"] == "autoscaling/v2" for hpa in scalers)


def test_secrets_come_from_the_existing_secret_when_one_is_named():
    rendered = check_chart.render(values("full-values"))
    assert not objects_of(rendered, "Secret")
    for spec in pod_specs(rendered).values():
        sources = spec["containers"][0]["envFrom"]
        assert {"secretRef": {"name": "berth-secrets"}} in sources


def test_the_ingress_takes_class_hosts_and_tls_from_values():
    (ingress,) = objects_of(check_chart.render(values("full-values")), "Ingress")
    assert ingress["spec"]["ingressClassName"] == "nginx"
    assert ingress["spec"]["tls"] == [{"hosts": ["berth.example.com"], "secretName": "berth-tls"}]
    assert ingress["spec"]["rules"][0]["host"] == "berth.example.com"
    (config,) = objects_of(check_chart.render(values("full-values")), "ConfigMap")
    assert config["data"]["CSRF_TRUSTED_ORIGINS"] == "https://berth.example.com"
    assert config["data"]["OIDC_ISSUER"] == "https://dex.example.com/dex"


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


def test_argo_cds_repository_secrets_are_a_role_in_its_namespace_and_can_be_left_out(ask):
    rendered = check_chart.render(values())
    authorizer = ask(rendered)
    assert authorizer.can_i(BERTH, "patch", "", "secrets", "argocd", "berth-repo-payments")
    assert not authorizer.can_i(BERTH, "patch", "", "secrets", "payments-shop-dev", "x")
    without = check_chart.render({**values(), "rbac": {"argocdRepositorySecrets": False}})
    assert not ask(without).can_i(BERTH, "patch", "", "secrets", "argocd", "berth-repo-payments")


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
