"""Reading the protobuf request bodies kubectl sends (``application/vnd.kubernetes.protobuf``).

kubectl 1.32's typed clients (``create configmap``, ``create secret``, ``create deployment``,
``auth can-i``, ``auth whoami``, ``create token``...) send protobuf and do not fall back to JSON,
so the sandbox reads the envelope (``k8s\\x00`` + ``runtime.Unknown``) and the messages of the
kinds those commands send, turning them into the JSON form (``create ingress``,
``poddisruptionbudget``, ``priorityclass``, ``quota``, ``service``, RBAC ones too). The
field numbers below are those of the Kubernetes API's protobuf IDL. A kind not listed is
refused with 415, like a server that does not take protobuf for a type (custom resources).
Answers are always JSON.
"""

from __future__ import annotations

import base64
from datetime import UTC, datetime
from typing import Any

from .errors import ApiError

MAGIC = b"k8s\x00"
PROTOBUF = "application/vnd.kubernetes.protobuf"

_META = "ObjectMeta"
# message -> {field number: "jsonName type"}; types: string int bool bytes Time Quantity
# IntOrString <Message>; "[]" prefix repeated; "{T}" a map from string to T. A field named
# "..." is embedded: its fields are the parent's in JSON (Go's `json:",inline"`).
MESSAGES: dict[str, dict[int, str]] = {
    "Unknown": {
        1: "typeMeta TypeMeta",
        2: "raw bytes",
        3: "contentEncoding string",
        4: "contentType string",
    },
    "TypeMeta": {1: "apiVersion string", 2: "kind string"},
    "ObjectMeta": {
        1: "name string",
        2: "generateName string",
        3: "namespace string",
        5: "uid string",
        6: "resourceVersion string",
        7: "generation int",
        11: "labels {string}",
        12: "annotations {string}",
        13: "ownerReferences []OwnerReference",
        14: "finalizers []string",
    },
    "OwnerReference": {
        1: "kind string",
        3: "name string",
        4: "uid string",
        5: "apiVersion string",
        6: "controller bool",
        7: "blockOwnerDeletion bool",
    },
    "LabelSelector": {1: "matchLabels {string}", 2: "matchExpressions []LabelSelectorRequirement"},
    "LabelSelectorRequirement": {1: "key string", 2: "operator string", 3: "values []string"},
    "ConfigMap": {
        1: f"metadata {_META}",
        2: "data {string}",
        3: "binaryData {bytes}",
        4: "immutable bool",
    },
    "Secret": {
        1: f"metadata {_META}",
        2: "data {bytes}",
        3: "type string",
        4: "stringData {string}",
        5: "immutable bool",
    },
    "Namespace": {1: f"metadata {_META}", 2: "spec NamespaceSpec"},
    "NamespaceSpec": {1: "finalizers []string"},
    "ServiceAccount": {
        1: f"metadata {_META}",
        3: "imagePullSecrets []LocalObjectReference",
        4: "automountServiceAccountToken bool",
    },
    "LocalObjectReference": {1: "name string"},
    "ResourceQuota": {1: f"metadata {_META}", 2: "spec ResourceQuotaSpec"},
    "ResourceQuotaSpec": {
        1: "hard {Quantity}",
        2: "scopes []string",
        3: "scopeSelector ScopeSelector",
    },
    "ScopeSelector": {1: "matchExpressions []ScopedResourceSelectorRequirement"},
    "ScopedResourceSelectorRequirement": {
        1: "scopeName string",
        2: "operator string",
        3: "values []string",
    },
    "Service": {1: f"metadata {_META}", 2: "spec ServiceSpec"},
    "ServiceSpec": {
        1: "ports []ServicePort",
        2: "selector {string}",
        3: "clusterIP string",
        4: "type string",
        10: "externalName string",
    },
    "ServicePort": {
        1: "name string",
        2: "protocol string",
        3: "port int",
        4: "targetPort IntOrString",
        5: "nodePort int",
    },
    "Deployment": {1: f"metadata {_META}", 2: "spec DeploymentSpec"},
    "DeploymentSpec": {
        1: "replicas int",
        2: "selector LabelSelector",
        3: "template PodTemplateSpec",
        4: "strategy DeploymentStrategy",
        5: "minReadySeconds int",
        6: "revisionHistoryLimit int",
        7: "paused bool",
        9: "progressDeadlineSeconds int",
    },
    "DeploymentStrategy": {1: "type string", 2: "rollingUpdate RollingUpdateDeployment"},
    "RollingUpdateDeployment": {1: "maxUnavailable IntOrString", 2: "maxSurge IntOrString"},
    "PodTemplateSpec": {1: f"metadata {_META}", 2: "spec PodSpec"},
    "PodSpec": {
        2: "containers []Container",
        3: "restartPolicy string",
        8: "serviceAccountName string",
        20: "initContainers []Container",
    },
    "Container": {
        1: "name string",
        2: "image string",
        3: "command []string",
        4: "args []string",
        6: "ports []ContainerPort",
        7: "env []EnvVar",
        8: "resources ResourceRequirements",
        14: "imagePullPolicy string",
    },
    "ContainerPort": {1: "name string", 3: "containerPort int", 4: "protocol string"},
    "EnvVar": {1: "name string", 2: "value string"},
    "ResourceRequirements": {1: "limits {Quantity}", 2: "requests {Quantity}"},
    "Job": {1: f"metadata {_META}", 2: "spec JobSpec"},
    "JobSpec": {
        1: "parallelism int",
        2: "completions int",
        4: "selector LabelSelector",
        6: "template PodTemplateSpec",
        7: "backoffLimit int",
        10: "suspend bool",
    },
    "CronJob": {1: f"metadata {_META}", 2: "spec CronJobSpec"},
    "CronJobSpec": {
        1: "schedule string",
        3: "concurrencyPolicy string",
        4: "suspend bool",
        5: "jobTemplate JobTemplateSpec",
        8: "timeZone string",
    },
    "JobTemplateSpec": {1: f"metadata {_META}", 2: "spec JobSpec"},
    "Role": {1: f"metadata {_META}", 2: "rules []PolicyRule"},
    "ClusterRole": {
        1: f"metadata {_META}",
        2: "rules []PolicyRule",
        3: "aggregationRule AggregationRule",
    },
    "PolicyRule": {
        1: "verbs []string",
        2: "apiGroups []string",
        3: "resources []string",
        4: "resourceNames []string",
        5: "nonResourceURLs []string",
    },
    "AggregationRule": {1: "clusterRoleSelectors []LabelSelector"},
    "RoleBinding": {1: f"metadata {_META}", 2: "subjects []Subject", 3: "roleRef RoleRef"},
    "ClusterRoleBinding": {1: f"metadata {_META}", 2: "subjects []Subject", 3: "roleRef RoleRef"},
    "Subject": {1: "kind string", 2: "apiGroup string", 3: "name string", 4: "namespace string"},
    "RoleRef": {1: "apiGroup string", 2: "kind string", 3: "name string"},
    "Ingress": {1: f"metadata {_META}", 2: "spec IngressSpec"},
    "IngressSpec": {
        1: "defaultBackend IngressBackend",
        2: "tls []IngressTLS",
        3: "rules []IngressRule",
        4: "ingressClassName string",
    },
    "IngressBackend": {3: "resource TypedLocalObjectReference", 4: "service IngressServiceBackend"},
    "TypedLocalObjectReference": {1: "apiGroup string", 2: "kind string", 3: "name string"},
    "IngressServiceBackend": {1: "name string", 2: "port ServiceBackendPort"},
    "ServiceBackendPort": {1: "name string", 2: "number int"},
    "IngressTLS": {1: "hosts []string", 2: "secretName string"},
    "IngressRule": {1: "host string", 2: "... IngressRuleValue"},
    "IngressRuleValue": {1: "http HTTPIngressRuleValue"},
    "HTTPIngressRuleValue": {1: "paths []HTTPIngressPath"},
    "HTTPIngressPath": {1: "path string", 2: "backend IngressBackend", 3: "pathType string"},
    "PodDisruptionBudget": {1: f"metadata {_META}", 2: "spec PodDisruptionBudgetSpec"},
    "PodDisruptionBudgetSpec": {
        1: "minAvailable IntOrString",
        2: "selector LabelSelector",
        3: "maxUnavailable IntOrString",
        4: "unhealthyPodEvictionPolicy string",
    },
    "PriorityClass": {
        1: f"metadata {_META}",
        2: "value int",
        3: "globalDefault bool",
        4: "description string",
        5: "preemptionPolicy string",
    },
    "SelfSubjectAccessReview": {1: f"metadata {_META}", 2: "spec SelfSubjectAccessReviewSpec"},
    "SelfSubjectAccessReviewSpec": {
        1: "resourceAttributes ResourceAttributes",
        2: "nonResourceAttributes NonResourceAttributes",
    },
    "SubjectAccessReview": {1: f"metadata {_META}", 2: "spec SubjectAccessReviewSpec"},
    "LocalSubjectAccessReview": {1: f"metadata {_META}", 2: "spec SubjectAccessReviewSpec"},
    "SubjectAccessReviewSpec": {
        1: "resourceAttributes ResourceAttributes",
        2: "nonResourceAttributes NonResourceAttributes",
        3: "user string",
        4: "groups []string",
        6: "uid string",
    },
    "ResourceAttributes": {
        1: "namespace string",
        2: "verb string",
        3: "group string",
        4: "version string",
        5: "resource string",
        6: "subresource string",
        7: "name string",
    },
    "NonResourceAttributes": {1: "path string", 2: "verb string"},
    "SelfSubjectRulesReview": {1: f"metadata {_META}", 2: "spec SelfSubjectRulesReviewSpec"},
    "SelfSubjectRulesReviewSpec": {1: "namespace string"},
    "SelfSubjectReview": {1: f"metadata {_META}"},
    "TokenReview": {1: f"metadata {_META}", 2: "spec TokenReviewSpec"},
    "TokenReviewSpec": {1: "token string", 2: "audiences []string"},
    "TokenRequest": {1: f"metadata {_META}", 2: "spec TokenRequestSpec"},
    "TokenRequestSpec": {1: "audiences []string", 4: "expirationSeconds int"},
    "DeleteOptions": {
        1: "gracePeriodSeconds int",
        2: "preconditions Preconditions",
        3: "orphanDependents bool",
        4: "propagationPolicy string",
        5: "dryRun []string",
    },
    "Preconditions": {1: "uid string", 2: "resourceVersion string"},
}
# Pointer fields in Go: present on the wire means set, even when zero or false; and
# "Message.field" for a field JSON always carries (no omitempty) where the name alone is ambiguous.
_KEEP_ZERO = {
    "PriorityClass.value",
    "minAvailable",
    "maxUnavailable",
    "replicas",
    "immutable",
    "automountServiceAccountToken",
    "expirationSeconds",
    "suspend",
    "backoffLimit",
    "parallelism",
    "completions",
    "gracePeriodSeconds",
    "orphanDependents",
}


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(data):
            raise ValueError("truncated varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7


def _fields(data: bytes) -> list[tuple[int, int, Any]]:
    """(number, wire type, value) for each field of one message."""
    out, pos = [], 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire == 1:
            value, pos = data[pos : pos + 8], pos + 8
        elif wire == 2:
            length, pos = _varint(data, pos)
            value, pos = data[pos : pos + length], pos + length
        elif wire == 5:
            value, pos = data[pos : pos + 4], pos + 4
        else:
            raise ValueError(f"unsupported wire type {wire}")
        out.append((number, wire, value))
    return out


def _scalar(kind: str, value: Any) -> Any:
    if kind == "string":
        return value.decode()
    if kind == "bytes":
        return base64.b64encode(value).decode()
    if kind == "bool":
        return bool(value)
    if kind == "int":
        return value - (1 << 64) if value >= 1 << 63 else value
    if kind == "Time":
        fields = dict((n, v) for n, _, v in _fields(value))
        return datetime.fromtimestamp(fields.get(1, 0), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    if kind == "Quantity":
        return dict((n, v) for n, _, v in _fields(value)).get(1, b"").decode()
    if kind == "IntOrString":
        fields = dict((n, v) for n, _, v in _fields(value))
        if fields.get(1, 0) == 1:
            return fields.get(3, b"").decode()
        number = fields.get(2, 0)
        return number - (1 << 64) if number >= 1 << 63 else number
    return decode_message(kind, value)


def decode_message(name: str, data: bytes) -> dict:
    table = MESSAGES.get(name)
    if table is None:
        raise KeyError(name)
    out: dict[str, Any] = {}
    for number, _, value in _fields(data):
        spec = table.get(number)
        if spec is None:
            continue
        field, kind = spec.split(" ")
        if field == "...":
            out.update(_scalar(kind, value))
        elif kind.startswith("{"):
            entry = dict((n, v) for n, _, v in _fields(value))
            out.setdefault(field, {})[entry.get(1, b"").decode()] = _scalar(
                kind[1:-1], entry.get(2, b"")
            )
        elif kind.startswith("[]"):
            out.setdefault(field, []).append(_scalar(kind[2:], value))
        else:
            out[field] = _scalar(kind, value)
    return {
        k: v
        for k, v in out.items()
        if v not in ("", 0, False, None, [], {}) or k in _KEEP_ZERO or f"{name}.{k}" in _KEEP_ZERO
    }


def decode(body: bytes) -> dict:
    """A protobuf request body as the JSON object it stands for."""
    if not body.startswith(MAGIC):
        raise ApiError(400, "the protobuf body does not start with the Kubernetes magic number")
    try:
        envelope = decode_message("Unknown", body[len(MAGIC) :])
        type_meta = envelope.get("typeMeta") or {}
        kind = type_meta.get("kind", "")
        raw = base64.b64decode(envelope.get("raw", ""))
        obj = decode_message(kind, raw)
    except KeyError as error:
        raise ApiError(
            415,
            f"the body of the request was in an unknown format - accepted "
            f"media types include: application/json, application/yaml "
            f"(no protobuf decoding for {error.args[0]})",
        ) from error
    except (ValueError, UnicodeDecodeError) as error:
        raise ApiError(400, f"the protobuf body could not be decoded: {error}") from error
    obj = {"apiVersion": type_meta.get("apiVersion", ""), "kind": kind, **obj}
    if not obj["apiVersion"]:
        del obj["apiVersion"]
    return obj
