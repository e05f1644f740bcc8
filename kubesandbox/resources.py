"""The resource types the sandbox serves: built-in ones, and those CRDs add at run time.

Each sandbox has its own :class:`Registry`, because installing a CustomResourceDefinition adds
types to one cluster only. The built-in types are the ones a tenant uses, storage only.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

# How metadata.name is validated, as the real apiserver does per type.
NAME_SUBDOMAIN = "subdomain"  # RFC 1123 subdomain, the default
NAME_LABEL = "label"  # RFC 1123 label (namespaces)
NAME_DNS1035 = "dns1035"  # RFC 1035 label (services)
NAME_PATH_SEGMENT = "path"  # anything without '/' or '%' (RBAC, e.g. "berth:tenant-admin")

FULL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
STATUS_VERBS = ("get", "patch", "update")
CREATE_ONLY = ("create",)


@dataclass(eq=False)
class ResourceType:
    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    name_rule: str = NAME_SUBDOMAIN
    # Types with a status subresource ignore .status on the main endpoint.
    has_status: bool = False
    # Custom resources (CRDs) differ: DELETE returns the object, no strategic merge.
    custom: bool = False
    verbs: tuple[str, ...] = FULL_VERBS
    # Virtual types (reviews, TokenRequest) are answered, never stored.
    virtual: bool = False
    # Other subresources: name -> verbs, e.g. serviceaccounts/token -> ("create",).
    subresources: dict[str, tuple[str, ...]] = field(default_factory=dict)
    categories: tuple[str, ...] = ()
    # For custom resources: the version's openAPIV3Schema and where it came from.
    schema: dict | None = None
    crd_name: str = ""
    # For custom resources: the version's additionalPrinterColumns (kubectl get's columns).
    printer_columns: list[dict] = field(default_factory=list)
    # Derived data (a compiled validator) kept with the type; a new CRD makes a new type.
    cache: dict = field(default_factory=dict, repr=False)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_resource(self) -> str:
        """The name used in error messages, e.g. 'deployments.apps' or 'configmaps'."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    def subresource_verbs(self, subresource: str) -> tuple[str, ...]:
        if subresource == "status" and self.has_status:
            return STATUS_VERBS
        return self.subresources.get(subresource, ())

    def discovery_entries(self) -> list[dict]:
        entry = {
            "name": self.plural,
            "singularName": self.kind.lower(),
            "namespaced": self.namespaced,
            "kind": self.kind,
            "verbs": list(self.verbs),
        }
        if self.short_names:
            entry["shortNames"] = list(self.short_names)
        if self.categories:
            entry["categories"] = list(self.categories)
        entries = [entry]
        if self.has_status:
            entries.append(self._sub_entry("status", self.kind, STATUS_VERBS))
        for name, verbs in self.subresources.items():
            kind = {"token": "TokenRequest", "scale": "Scale"}.get(name, self.kind)
            entries.append(self._sub_entry(name, kind, verbs))
        return entries

    def _sub_entry(self, name: str, kind: str, verbs: tuple[str, ...]) -> dict:
        entry = {
            "name": f"{self.plural}/{name}",
            "singularName": "",
            "namespaced": self.namespaced,
            "kind": kind,
            "verbs": list(verbs),
        }
        if kind == "TokenRequest":
            entry.update(group="authentication.k8s.io", version="v1")
        elif kind == "Scale":
            entry.update(group="autoscaling", version="v1")
        return entry


def _t(
    group: str,
    version: str,
    plural: str,
    kind: str,
    namespaced: bool = True,
    *short: str,
    **options: object,
) -> ResourceType:
    return ResourceType(group, version, plural, kind, namespaced, tuple(short), **options)


RBAC = "rbac.authorization.k8s.io"
ADMISSION = "admissionregistration.k8s.io"
AUTHN = "authentication.k8s.io"
AUTHZ = "authorization.k8s.io"
APIEXTENSIONS = "apiextensions.k8s.io"
_ALL = ("all",)
_RBAC_NAMES = {"name_rule": NAME_PATH_SEGMENT}
_REVIEW = {"virtual": True, "verbs": CREATE_ONLY}
_SCALE = {"scale": STATUS_VERBS}
_SCALABLE = {"has_status": True, "subresources": _SCALE, "categories": _ALL}

BUILT_IN_TYPES: tuple[ResourceType, ...] = (
    _t(
        "",
        "v1",
        "namespaces",
        "Namespace",
        False,
        "ns",
        name_rule=NAME_LABEL,
        has_status=True,
        verbs=tuple(v for v in FULL_VERBS if v != "deletecollection"),
    ),
    _t(
        "",
        "v1",
        "serviceaccounts",
        "ServiceAccount",
        True,
        "sa",
        subresources={"token": CREATE_ONLY},
    ),
    _t("", "v1", "configmaps", "ConfigMap", True, "cm"),
    _t("", "v1", "secrets", "Secret"),
    _t(
        "",
        "v1",
        "services",
        "Service",
        True,
        "svc",
        name_rule=NAME_DNS1035,
        has_status=True,
        categories=_ALL,
    ),
    _t("", "v1", "pods", "Pod", True, "po", has_status=True, categories=_ALL),
    _t("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", True, "pvc", has_status=True),
    _t("", "v1", "resourcequotas", "ResourceQuota", True, "quota", has_status=True),
    _t("", "v1", "limitranges", "LimitRange", True, "limits"),
    _t("", "v1", "events", "Event", True, "ev"),
    _t("", "v1", "endpoints", "Endpoints", True, "ep"),
    _t("apps", "v1", "deployments", "Deployment", True, "deploy", **_SCALABLE),
    _t("apps", "v1", "statefulsets", "StatefulSet", True, "sts", **_SCALABLE),
    _t("apps", "v1", "daemonsets", "DaemonSet", True, "ds", has_status=True, categories=_ALL),
    _t("apps", "v1", "replicasets", "ReplicaSet", True, "rs", **_SCALABLE),
    _t("batch", "v1", "jobs", "Job", True, has_status=True, categories=_ALL),
    _t("batch", "v1", "cronjobs", "CronJob", True, "cj", has_status=True, categories=_ALL),
    _t("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", True, "netpol"),
    _t("networking.k8s.io", "v1", "ingresses", "Ingress", True, "ing", has_status=True),
    _t("networking.k8s.io", "v1", "ingressclasses", "IngressClass", False),
    _t(RBAC, "v1", "roles", "Role", True, **_RBAC_NAMES),
    _t(RBAC, "v1", "rolebindings", "RoleBinding", True, **_RBAC_NAMES),
    _t(RBAC, "v1", "clusterroles", "ClusterRole", False, **_RBAC_NAMES),
    _t(RBAC, "v1", "clusterrolebindings", "ClusterRoleBinding", False, **_RBAC_NAMES),
    _t("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", True, "pdb", has_status=True),
    _t("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", False, "pc"),
    _t(
        "autoscaling",
        "v2",
        "horizontalpodautoscalers",
        "HorizontalPodAutoscaler",
        True,
        "hpa",
        has_status=True,
        categories=_ALL,
    ),
    _t("coordination.k8s.io", "v1", "leases", "Lease"),
    _t(
        ADMISSION,
        "v1",
        "validatingadmissionpolicies",
        "ValidatingAdmissionPolicy",
        False,
        has_status=True,
    ),
    _t(
        ADMISSION,
        "v1",
        "validatingadmissionpolicybindings",
        "ValidatingAdmissionPolicyBinding",
        False,
    ),
    _t(ADMISSION, "v1", "validatingwebhookconfigurations", "ValidatingWebhookConfiguration", False),
    _t(ADMISSION, "v1", "mutatingwebhookconfigurations", "MutatingWebhookConfiguration", False),
    _t(
        APIEXTENSIONS,
        "v1",
        "customresourcedefinitions",
        "CustomResourceDefinition",
        False,
        "crd",
        "crds",
        has_status=True,
    ),
    _t(AUTHN, "v1", "tokenreviews", "TokenReview", False, **_REVIEW),
    _t(AUTHN, "v1", "selfsubjectreviews", "SelfSubjectReview", False, **_REVIEW),
    _t(AUTHZ, "v1", "selfsubjectaccessreviews", "SelfSubjectAccessReview", False, **_REVIEW),
    _t(AUTHZ, "v1", "selfsubjectrulesreviews", "SelfSubjectRulesReview", False, **_REVIEW),
    _t(AUTHZ, "v1", "subjectaccessreviews", "SubjectAccessReview", False, **_REVIEW),
    _t(AUTHZ, "v1", "localsubjectaccessreviews", "LocalSubjectAccessReview", True, **_REVIEW),
)

NAMESPACES = BUILT_IN_TYPES[0]


class Registry:
    """The types one sandbox serves: the built-in table plus what its CRDs define."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._custom: dict[str, list[ResourceType]] = {}  # CRD name -> its served versions
        self.generation = 0  # bumped whenever the set of types changes (openapi caches)

    def all(self) -> list[ResourceType]:
        with self._lock:
            return [*BUILT_IN_TYPES, *(rt for rts in self._custom.values() for rt in rts)]

    def set_custom(self, crd_name: str, types: list[ResourceType]) -> None:
        with self._lock:
            if types:
                self._custom[crd_name] = types
            else:
                self._custom.pop(crd_name, None)
            self.generation += 1

    def custom_types(self, crd_name: str) -> list[ResourceType]:
        with self._lock:
            return list(self._custom.get(crd_name, ()))

    def group_versions(self) -> dict[str, list[str]]:
        """Named API groups (not the core group) and their versions, in table order."""
        groups: dict[str, list[str]] = {}
        for rt in self.all():
            if rt.group and rt.version not in groups.setdefault(rt.group, []):
                groups[rt.group].append(rt.version)
        return groups

    def types_in(self, group: str, version: str) -> Iterator[ResourceType]:
        return (rt for rt in self.all() if rt.group == group and rt.version == version)

    def find_type(self, group: str, version: str, plural: str) -> ResourceType | None:
        return next((rt for rt in self.types_in(group, version) if rt.plural == plural), None)

    def by_kind(self, group: str, version: str, kind: str) -> ResourceType | None:
        return next((rt for rt in self.types_in(group, version) if rt.kind == kind), None)

    def lookup(self, kind: str, api_version: str | None = None) -> ResourceType:
        """Find a type by kind or plural (case-insensitive), optionally pinned to an apiVersion."""
        wanted = kind.lower()
        matches = [
            rt
            for rt in self.all()
            if wanted in (rt.kind.lower(), rt.plural)
            and (api_version is None or rt.api_version == api_version)
        ]
        if len(matches) != 1:
            raise KeyError(f"no single resource type for kind={kind!r} apiVersion={api_version!r}")
        return matches[0]
