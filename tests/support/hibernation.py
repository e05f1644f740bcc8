"""A namespace that sleeps, for hibernation's tests: the tier's schedule close to now, the
team's workloads and GitOps engines deploying into it (tests/provisioning/jobs/
test_hibernation*.py)."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from provisioning import tasks
from provisioning.reconcile import door
from provisioning.reconcile.queue import Cause
from tenants.choices import GuardrailsMode, NamespaceState
from tenants.models import EnvironmentTier, Namespace
from tests.support.gitops_loop import built_on_the_loop, project, work

# that Berth's ServiceAccount token (a day) outlives the clock moved there.
_SOON = (datetime.now(UTC) + timedelta(hours=2)).replace(minute=0, second=0, microsecond=0)
SLEEP_AT, WAKE_AT = _SOON, _SOON + timedelta(hours=3)
TUESDAY_NIGHT = SLEEP_AT + timedelta(hours=1)  # asleep
WEDNESDAY_MORNING = WAKE_AT + timedelta(seconds=1)  # awake again
CART = "payments-cart-dev"  # the tenant's Flux project's namespace
KUBE_GREEN = Path(__file__).resolve().parents[2].parent / "shared" / "crds-optional" / "kube-green"


def pod_template(app: str) -> dict:
    return {
        "metadata": {"labels": {"app": app}},
        "spec": {"containers": [{"name": app, "image": f"registry.example/{app}:1"}]},
    }


def workloads(namespace: str) -> list[dict]:
    def deployment(name: str, replicas: int) -> dict:
        return {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": {"app": name}},
                "template": pod_template(name),
            },
        }

    return [
        deployment("web", 3),
        deployment("worker", 1),
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {"name": "db", "namespace": namespace},
            "spec": {
                "replicas": 2,
                "serviceName": "db",
                "selector": {"matchLabels": {"app": "db"}},
                "template": pod_template("db"),
            },
        },
        {
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "metadata": {"name": "report", "namespace": namespace},
            "spec": {
                "schedule": "0 * * * *",
                "jobTemplate": {
                    "spec": {
                        "template": {
                            **pod_template("report"),
                            "spec": {
                                "containers": [
                                    {"name": "report", "image": "registry.example/report:1"}
                                ],
                                "restartPolicy": "Never",
                            },
                        }
                    }
                },
            },
        },
        # The tenant keeps this one up: it never sleeps.
        {
            **deployment("pager", 1),
            "metadata": {
                "name": "pager",
                "namespace": namespace,
                "labels": {"berth.dev/sleep": "never"},
            },
        },
    ]


def engines(namespace: str) -> list[dict]:
    """The team's Application deploying into the namespace (from its repository, applied by
    its root) and one deploying elsewhere, and the Flux Kustomization of the tenant's Flux
    project's namespace (payments-cart-dev)."""
    application = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {"name": "payments-shop-dev", "namespace": "payments-apps"},
        "spec": {
            "project": "payments",
            "source": {"repoURL": "https://git.example/payments.git", "path": "apps/shop/dev"},
            "destination": {"server": "https://kubernetes.default.svc", "namespace": namespace},
            "syncPolicy": {"automated": {"prune": True, "selfHeal": True}},
        },
    }
    other = copy.deepcopy(application)
    other["metadata"]["name"] = "payments-shop-prod"
    other["spec"]["destination"]["namespace"] = "payments-shop-prod"
    kustomization = {
        "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
        "kind": "Kustomization",
        "metadata": {"name": "payments-cart-dev", "namespace": "payments-gitops"},
        "spec": {
            "interval": "10m0s",
            "path": "./apps/cart/overlays/dev",
            "prune": True,
            "sourceRef": {"kind": "GitRepository", "name": "payments"},
            "serviceAccountName": "berth-reconciler",
            "targetNamespace": CART,
        },
    }
    return [application, other, kustomization]


def live(sandbox, obj: dict) -> dict:
    meta = obj["metadata"]
    return sandbox.get(obj["kind"], meta["name"], meta["namespace"])


def spec_and_annotations(obj: dict) -> tuple[dict, dict]:
    return obj["spec"], obj["metadata"].get("annotations") or {}


def sleepy_namespace(gitops_world, sandbox) -> Namespace:
    """payments-shop-dev on a cluster with Berth's guardrails, its tier sleeping every night
    from 20:00 to 08:00 UTC, holding the team's workloads; built once per test process."""

    def build() -> None:
        cluster = gitops_world["cluster"]
        cluster.guardrails = GuardrailsMode.BERTH
        cluster.save(update_fields=["guardrails"])
        assert not tasks.install_guardrails(cluster.pk).startswith("failed")
        EnvironmentTier.objects.filter(slug="dev").update(
            sleep_weekdays="*",
            sleep_at=SLEEP_AT.time(),
            wake_at=WAKE_AT.time(),
            sleep_time_zone="UTC",
        )
        # Argo CD deploys shop, Flux cart: the tenant has both engines' namespaces.
        project(gitops_world, "shop", "argocd", "dev")
        project(gitops_world, "cart", "flux", "dev")
        work()
        for obj in workloads("payments-shop-dev") + engines("payments-shop-dev"):
            sandbox.upsert(obj)

    built_on_the_loop(gitops_world, sandbox, "sleepy", build)
    return Namespace.objects.select_related("tier", "cluster", "tenant").get(
        name="payments-shop-dev", state=NamespaceState.ACTIVE
    )


def settle(namespace: Namespace) -> None:
    """What the queue does at a scheduled moment: the namespace's sleep key reconciled."""
    door.settle_sleep([namespace], cause=Cause("sleep"))
    door.drain(worker="test")


def kube_green_crds() -> list[dict]:
    """kube-green's CRD, as ../shared/crds-optional keeps it (copied unchanged from kube-green's
    release); none when it is not beside the checkout."""
    import yaml

    if not KUBE_GREEN.is_dir():
        return []
    return [
        document
        for path in sorted(KUBE_GREEN.glob("*.yaml"))
        for document in yaml.safe_load_all(path.read_text())
        if document
    ]


def load_kube_green(sandbox) -> None:
    """kube-green's CRD served by the stand-in, as installing kube-green does."""
    crds = kube_green_crds()
    if not crds:
        pytest.skip("kube-green's CRD is not here: expected ../shared/crds-optional/kube-green")
    for document in crds:
        sandbox.upsert(document)
