"""Hibernation, as plain data: the SleepInfo kube-green reads where a cluster serves it,
and, where it does not, the patches that put a namespace's workloads to sleep and back.
Each object that sleeps keeps what it had in an annotation, so waking restores exactly
that; an object labelled `berth.dev/sleep: never` is left alone (kube-green's excludeRef
says the same). The team's GitOps engines are paused the same way while it sleeps, so they
do not scale it back up: an Argo CD Application's automated sync (`enabled: false`, which
keeps its prune and self-heal settings), a Flux Kustomization's `suspend`."""

from __future__ import annotations

import json
from typing import Any

from provisioning.plan.model import NamespaceSpec, metadata_of

SLEEP_INFO = "berth-sleep"
SLEEP_INFO_KIND = ("kube-green.com/v1alpha1", "SleepInfo")
LABEL_SLEEP = "berth.dev/sleep"  # "never": this object does not sleep
REPLICAS_BEFORE = "berth.dev/replicas-before-sleep"
SUSPEND_BEFORE = "berth.dev/suspend-before-sleep"
AUTO_SYNC_BEFORE = "berth.dev/auto-sync-before-sleep"
# Asks each engine to look again at once when it resumes.
ARGOCD_REFRESH = "argocd.argoproj.io/refresh"
FLUX_REQUESTED_AT = "reconcile.fluxcd.io/requestedAt"

WORKLOADS = (("apps/v1", "Deployment"), ("apps/v1", "StatefulSet"))
CRONJOBS = ("batch/v1", "CronJob")
APPLICATIONS = ("argoproj.io/v1alpha1", "Application")
KUSTOMIZATIONS = ("kustomize.toolkit.fluxcd.io/v1", "Kustomization")


def sleep_objects(ns: NamespaceSpec, labels: dict[str, str]) -> list[dict[str, Any]]:
    """The namespace's SleepInfo, where kube-green carries its schedule out."""
    sleep = ns.sleep
    if sleep is None or not sleep.kube_green:
        return []
    return [
        {
            "apiVersion": SLEEP_INFO_KIND[0],
            "kind": SLEEP_INFO_KIND[1],
            "metadata": metadata_of(SLEEP_INFO, labels, ns.name),
            "spec": {
                "weekdays": sleep.weekdays,
                "sleepAt": sleep.sleep_at,
                "wakeUpAt": sleep.wake_at,
                "timeZone": sleep.time_zone,
                "suspendCronJobs": True,
                "excludeRef": [{"matchLabels": {LABEL_SLEEP: "never"}}],
            },
        }
    ]


def _annotations(obj: dict[str, Any]) -> dict[str, str]:
    return (obj.get("metadata") or {}).get("annotations") or {}


def _kept(text: str, allowed: tuple[Any, ...]) -> tuple[bool, Any]:
    """What an annotation kept, when it is one Berth writes (anyone who may edit the object
    may edit it): (True, value), else (False, None): the annotation is dropped, nothing set."""
    try:
        value = json.loads(text)
    except ValueError:
        return False, None
    if any(value is each or (type(value) is type(each) and value == each) for each in allowed):
        return True, value
    return False, None


def _count(text: str) -> int | None:
    return int(text) if text.isdigit() and len(text) <= 6 else None


def excluded(obj: dict[str, Any]) -> bool:
    return ((obj.get("metadata") or {}).get("labels") or {}).get(LABEL_SLEEP) == "never"


def workload_patch(obj: dict[str, Any], *, asleep: bool) -> dict[str, Any] | None:
    """A Deployment's or StatefulSet's merge patch: to zero replicas, keeping its count; or
    back to the count it kept. None: nothing to change."""
    kept = _annotations(obj).get(REPLICAS_BEFORE)
    replicas = (obj.get("spec") or {}).get("replicas", 1)
    if not asleep:
        if kept is None:
            return None
        return {
            "metadata": {"annotations": {REPLICAS_BEFORE: None}},
            "spec": {"replicas": int(kept)},
        }
    if excluded(obj):
        return None
    if kept is None:
        if not replicas:
            return None
        return {
            "metadata": {"annotations": {REPLICAS_BEFORE: str(replicas)}},
            "spec": {"replicas": 0},
        }
    return {"spec": {"replicas": 0}} if replicas else None  # scaled up while asleep


def cronjob_patch(obj: dict[str, Any], *, asleep: bool) -> dict[str, Any] | None:
    """A CronJob's merge patch: suspended, keeping whether (and how) it said so before."""
    kept = _annotations(obj).get(SUSPEND_BEFORE)
    suspend = (obj.get("spec") or {}).get("suspend")
    if not asleep:
        if kept is None:
            return None
        valid, value = _kept(kept, (False, None))
        spec = {"spec": {"suspend": value}} if valid else {}
        return {"metadata": {"annotations": {SUSPEND_BEFORE: None}}, **spec}
    if excluded(obj) or kept is not None or suspend is True:
        return None
    return {
        "metadata": {"annotations": {SUSPEND_BEFORE: json.dumps(suspend)}},
        "spec": {"suspend": True},
    }


def application_patch(obj: dict[str, Any], *, asleep: bool) -> dict[str, Any] | None:
    """An Argo CD Application deploying into the namespace: its automated sync off while the
    namespace sleeps (its prune and self-heal settings kept), then as it was, refreshed."""
    kept = _annotations(obj).get(AUTO_SYNC_BEFORE)
    automated = ((obj.get("spec") or {}).get("syncPolicy") or {}).get("automated")
    if not asleep:
        if kept is None:
            return None
        valid, value = _kept(kept, (True, None))
        spec = {"spec": {"syncPolicy": {"automated": {"enabled": value}}}} if valid else {}
        return {
            "metadata": {"annotations": {AUTO_SYNC_BEFORE: None, ARGOCD_REFRESH: "normal"}},
            **spec,
        }
    if automated is None or kept is not None or automated.get("enabled") is False:
        return None
    return {
        "metadata": {"annotations": {AUTO_SYNC_BEFORE: json.dumps(automated.get("enabled"))}},
        "spec": {"syncPolicy": {"automated": {"enabled": False}}},
    }


def kustomization_patch(obj: dict[str, Any], *, asleep: bool, now: str) -> dict[str, Any] | None:
    """A Flux Kustomization deploying into the namespace: suspended while it sleeps, then as
    it was, asked to reconcile at once."""
    kept = _annotations(obj).get(SUSPEND_BEFORE)
    suspended = (obj.get("spec") or {}).get("suspend")
    if not asleep:
        if kept is None:
            return None
        valid, value = _kept(kept, (False, None))
        spec = {"spec": {"suspend": value}} if valid else {}
        return {"metadata": {"annotations": {SUSPEND_BEFORE: None, FLUX_REQUESTED_AT: now}}, **spec}
    if kept is not None or suspended is True:
        return None
    return {
        "metadata": {"annotations": {SUSPEND_BEFORE: json.dumps(suspended)}},
        "spec": {"suspend": True},
    }
