"""The Helm chart's workloads, rendered by Helm's own engine: the Deployments and the
migrations Job run as non-root on a read-only root, the Job is a pre-install/pre-upgrade hook
after what it reads, web has probes, beat runs alone, the watcher beside a standby with a
heartbeat, web and worker have disruption budgets and autoscalers, and secrets and the
ingress come from values.
"""

from tests.support.helm_chart import check_chart, needs_helm, objects_of, pod_specs, values

pytestmark = needs_helm


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
