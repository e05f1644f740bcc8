"""The resource types the sandbox serves: the single table everything else reads."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

# How metadata.name is validated, as the real apiserver does per type.
NAME_SUBDOMAIN = "subdomain"  # RFC 1123 subdomain, the default
NAME_LABEL = "label"  # RFC 1123 label (namespaces)
NAME_DNS1035 = "dns1035"  # RFC 1035 label (services)
NAME_PATH_SEGMENT = "path"  # anything without '/' or '%' (RBAC, e.g. "berth:tenant-admin")

FULL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update")
STATUS_VERBS = ("get", "patch", "update")


@dataclass(frozen=True)
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

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_resource(self) -> str:
        """The name used in error messages, e.g. 'deployments.apps' or 'configmaps'."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def verbs(self) -> tuple[str, ...]:
        if self.kind == "Namespace":  # the real server has no deletecollection for namespaces
            return tuple(v for v in FULL_VERBS if v != "deletecollection")
        return FULL_VERBS

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
        entries = [entry]
        if self.has_status:
            entries.append(
                {
                    "name": f"{self.plural}/status",
                    "singularName": "",
                    "namespaced": self.namespaced,
                    "kind": self.kind,
                    "verbs": list(STATUS_VERBS),
                }
            )
        return entries


def _core(
    plural: str,
    kind: str,
    *,
    namespaced: bool = True,
    short_names: tuple[str, ...] = (),
    name_rule: str = NAME_SUBDOMAIN,
    has_status: bool = False,
) -> ResourceType:
    return ResourceType("", "v1", plural, kind, namespaced, short_names, name_rule, has_status)


def _crd(
    group: str,
    version: str,
    plural: str,
    kind: str,
    *,
    namespaced: bool = True,
    short_names: tuple[str, ...] = (),
) -> ResourceType:
    return ResourceType(
        group, version, plural, kind, namespaced, short_names, has_status=True, custom=True
    )


RBAC = "rbac.authorization.k8s.io"
ADMISSION = "admissionregistration.k8s.io"
KARGO = "kargo.akuity.io"

RESOURCE_TYPES: tuple[ResourceType, ...] = (
    _core(
        "namespaces",
        "Namespace",
        namespaced=False,
        short_names=("ns",),
        name_rule=NAME_LABEL,
        has_status=True,
    ),
    _core("serviceaccounts", "ServiceAccount", short_names=("sa",)),
    _core("configmaps", "ConfigMap", short_names=("cm",)),
    _core("secrets", "Secret"),
    _core("services", "Service", short_names=("svc",), name_rule=NAME_DNS1035, has_status=True),
    _core("resourcequotas", "ResourceQuota", short_names=("quota",), has_status=True),
    _core("limitranges", "LimitRange", short_names=("limits",)),
    ResourceType("apps", "v1", "deployments", "Deployment", True, ("deploy",), has_status=True),
    ResourceType(RBAC, "v1", "roles", "Role", True, name_rule=NAME_PATH_SEGMENT),
    ResourceType(RBAC, "v1", "rolebindings", "RoleBinding", True, name_rule=NAME_PATH_SEGMENT),
    ResourceType(RBAC, "v1", "clusterroles", "ClusterRole", False, name_rule=NAME_PATH_SEGMENT),
    ResourceType(
        RBAC, "v1", "clusterrolebindings", "ClusterRoleBinding", False, name_rule=NAME_PATH_SEGMENT
    ),
    ResourceType("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", True, ("netpol",)),
    ResourceType(
        "networking.k8s.io", "v1", "ingresses", "Ingress", True, ("ing",), has_status=True
    ),
    ResourceType(
        ADMISSION,
        "v1",
        "validatingadmissionpolicies",
        "ValidatingAdmissionPolicy",
        False,
        has_status=True,
    ),
    ResourceType(
        ADMISSION,
        "v1",
        "validatingadmissionpolicybindings",
        "ValidatingAdmissionPolicyBinding",
        False,
    ),
    _crd("argoproj.io", "v1alpha1", "appprojects", "AppProject", short_names=("appproj",)),
    _crd("argoproj.io", "v1alpha1", "applications", "Application", short_names=("app",)),
    _crd(KARGO, "v1alpha1", "projects", "Project", namespaced=False),
    _crd(KARGO, "v1alpha1", "projectconfigs", "ProjectConfig"),
    _crd(KARGO, "v1alpha1", "warehouses", "Warehouse"),
    _crd(KARGO, "v1alpha1", "stages", "Stage"),
    _crd(
        "source.toolkit.fluxcd.io",
        "v1",
        "gitrepositories",
        "GitRepository",
        short_names=("gitrepo",),
    ),
    _crd(
        "kustomize.toolkit.fluxcd.io", "v1", "kustomizations", "Kustomization", short_names=("ks",)
    ),
    _crd("cert-manager.io", "v1", "certificates", "Certificate", short_names=("cert",)),
)

NAMESPACES = RESOURCE_TYPES[0]


def group_versions() -> dict[str, list[str]]:
    """Named API groups (not the core group) and their versions, in table order."""
    groups: dict[str, list[str]] = {}
    for rt in RESOURCE_TYPES:
        if rt.group and rt.version not in groups.setdefault(rt.group, []):
            groups[rt.group].append(rt.version)
    return groups


def types_in(group: str, version: str) -> Iterator[ResourceType]:
    return (rt for rt in RESOURCE_TYPES if rt.group == group and rt.version == version)


def find_type(group: str, version: str, plural: str) -> ResourceType | None:
    return next((rt for rt in types_in(group, version) if rt.plural == plural), None)


def lookup(kind: str, api_version: str | None = None) -> ResourceType:
    """Find a type by kind or plural (case-insensitive), optionally pinned to an apiVersion."""
    wanted = kind.lower()
    matches = [
        rt
        for rt in RESOURCE_TYPES
        if wanted in (rt.kind.lower(), rt.plural)
        and (api_version is None or rt.api_version == api_version)
    ]
    if len(matches) != 1:
        raise KeyError(f"no single resource type for kind={kind!r} apiVersion={api_version!r}")
    return matches[0]
