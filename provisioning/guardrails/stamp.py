"""Which guardrails a cluster has: the objects "Install guardrails" applies carry the digest
of the whole set, so one list per kind tells whether they are all there and current; and
what each says is compared with what it should say, since a stamp survives any edit (a
binding switched from Deny to Audit keeps its annotation). Pure."""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from provisioning.plan import MANAGED_BY
from provisioning.plan.compare import object_finding

ANNOTATION = "berth.dev/guardrails"
# The kinds whose objects are the guardrails (the Namespace Berth runs in is not one).
CHECKED_KINDS = (
    ("rbac.authorization.k8s.io/v1", "ClusterRole"),
    ("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy"),
    ("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding"),
)


def _checked(obj: Mapping[str, Any]) -> bool:
    return (obj["apiVersion"], obj["kind"]) in CHECKED_KINDS


def guardrails_digest(objects: Iterable[Mapping[str, Any]]) -> str:
    """The digest of what an install applies: a new Berth whose policies or roles say
    anything else has another, and the clusters still holding the old ones are outdated."""
    canonical = json.dumps(
        [obj for obj in objects if _checked(obj)], sort_keys=True, separators=(",", ":")
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


def stamped(objects: Iterable[Mapping[str, Any]], digest: str) -> list[dict[str, Any]]:
    """The objects as installed: each guardrail annotated with the digest of the set."""
    found = []
    for obj in objects:
        obj = copy.deepcopy(dict(obj))
        if _checked(obj):
            obj["metadata"].setdefault("annotations", {})[ANNOTATION] = digest
        found.append(obj)
    return found


def gaps(
    expected: Iterable[Mapping[str, Any]], live: Iterable[Mapping[str, Any]], digest: str
) -> list[str]:
    """What is missing or outdated of the expected guardrails among the live objects (those
    of the checked kinds Berth labelled, or the Helm chart installed), in people's words;
    empty when every one is there and carries this digest."""
    held = {(obj.get("kind", ""), obj["metadata"]["name"]): obj for obj in live}
    missing, outdated = [], []
    for obj in expected:
        if not _checked(obj):
            continue
        key = (obj["kind"], obj["metadata"]["name"])
        there = held.get(key)
        if there is None:
            missing.append(f"{key[0]} {key[1]}")
            continue
        labels = there["metadata"].get("labels") or {}
        annotations = there["metadata"].get("annotations") or {}
        if labels.get(MANAGED_BY) != "Helm" and annotations.get(ANNOTATION) != digest:
            outdated.append(f"{key[0]} {key[1]}")
    found = []
    if missing:
        found.append(f"missing {', '.join(missing)}")
    if outdated:
        found.append(f"from another Berth version: {', '.join(outdated)}")
    return found


def _stamped_current(obj: Mapping[str, Any], digest: str) -> bool:
    annotations = obj["metadata"].get("annotations") or {}
    return annotations.get(ANNOTATION) == digest


def weakened(
    expected: Iterable[Mapping[str, Any]], live: Iterable[Mapping[str, Any]], digest: str
) -> list[str]:
    """The expected guardrails that are there, stamped with this digest, and yet say
    something else: one line per object, naming where it differs on the fields Berth sets
    (spec, rules, labels...), e.g. "ValidatingAdmissionPolicyBinding/berth-protect-managed:
    changed (spec.validationActions[0])". Compared as drift compares any object Berth applied
    (provisioning.plan.compare.object_finding). Missing and outdated ones are `gaps`' (an
    outdated one differs as a matter of course); the Helm chart's are the chart's."""
    held = {(obj.get("kind", ""), obj["metadata"]["name"]): obj for obj in live}
    found = []
    for obj in expected:
        if not _checked(obj):
            continue
        there = held.get((obj["kind"], obj["metadata"]["name"]))
        if there is None or not _stamped_current(there, digest):
            continue
        if (there["metadata"].get("labels") or {}).get(MANAGED_BY) == "Helm":
            continue
        finding = object_finding(dict(obj), {"apiVersion": obj["apiVersion"], **there})
        if finding is not None:
            found.append(f"{finding['object']}: {finding['status']} ({finding['detail']})")
    return found
