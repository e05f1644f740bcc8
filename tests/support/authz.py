"""Ask an API server, not a model of one: who may do what, and whether admission lets it.

`LiveCluster` puts objects (Roles, bindings, Berth's plans, its admission policies) into a
fresh Kubernetes API stand-in and answers
- `can_i(subject, verb, group, resource, namespace, name)` with a SubjectAccessReview, as
  `kubectl auth can-i --as` does (RBAC only);
- `attempt(subject, method, path, body)` with the request itself, made as the subject
  (impersonation) and dry-run for writes: "allowed", "RBAC" (refused by authorization) or
  "admission" (refused by a ValidatingAdmissionPolicy), with the API server's message.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import requests
from urllib3 import HTTPHeaderDict

from kubesandbox import DEFAULT_NAMESPACES, KubeSandbox

RBAC_GROUP = "rbac.authorization.k8s.io"
# Kinds the tests name, as the API server's resources (plural) by (group, kind).
RESOURCES: dict[tuple[str, str], str] = {
    ("", "Namespace"): "namespaces",
    ("", "ServiceAccount"): "serviceaccounts",
    ("", "ResourceQuota"): "resourcequotas",
    ("", "LimitRange"): "limitranges",
    ("", "ConfigMap"): "configmaps",
    ("", "Secret"): "secrets",
    ("", "Service"): "services",
    ("", "Pod"): "pods",
    ("apps", "Deployment"): "deployments",
    ("apps", "StatefulSet"): "statefulsets",
    ("batch", "Job"): "jobs",
    ("networking.k8s.io", "NetworkPolicy"): "networkpolicies",
    ("networking.k8s.io", "Ingress"): "ingresses",
    (RBAC_GROUP, "Role"): "roles",
    (RBAC_GROUP, "RoleBinding"): "rolebindings",
    (RBAC_GROUP, "ClusterRole"): "clusterroles",
    (RBAC_GROUP, "ClusterRoleBinding"): "clusterrolebindings",
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"): "validatingadmissionpolicies",
    (
        "admissionregistration.k8s.io",
        "ValidatingAdmissionPolicyBinding",
    ): "validatingadmissionpolicybindings",
    ("argoproj.io", "AppProject"): "appprojects",
    ("argoproj.io", "Application"): "applications",
    ("kargo.akuity.io", "Project"): "projects",
    ("kargo.akuity.io", "ProjectConfig"): "projectconfigs",
    ("kargo.akuity.io", "Stage"): "stages",
    ("kargo.akuity.io", "Warehouse"): "warehouses",
    ("kustomize.toolkit.fluxcd.io", "Kustomization"): "kustomizations",
    ("source.toolkit.fluxcd.io", "GitRepository"): "gitrepositories",
    ("cert-manager.io", "Certificate"): "certificates",
    ("kube-green.com", "SleepInfo"): "sleepinfos",
    ("batch", "CronJob"): "cronjobs",
}
CLUSTER_SCOPED = {
    "Namespace",
    "ClusterRole",
    "ClusterRoleBinding",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
}


def resource_of(api_version: str, kind: str) -> tuple[str, str]:
    group = api_version.rpartition("/")[0]
    return group, RESOURCES[(group, kind)]


@dataclass(frozen=True)
class Subject:
    """Who asks: a user with groups, or a ServiceAccount."""

    username: str
    groups: tuple[str, ...] = ()

    @classmethod
    def user(cls, username: str, *groups: str) -> Subject:
        return cls(username, groups)

    @classmethod
    def service_account(cls, namespace: str, name: str) -> Subject:
        return cls(
            f"system:serviceaccount:{namespace}:{name}",
            ("system:serviceaccounts", f"system:serviceaccounts:{namespace}"),
        )

    def __str__(self) -> str:
        return self.username


def path_of(obj: dict[str, Any], *, named: bool = True) -> str:
    """The REST path of an object (its collection when `named` is False)."""
    group, resource = resource_of(obj["apiVersion"], obj["kind"])
    base = f"/apis/{obj['apiVersion']}" if group else f"/api/{obj['apiVersion']}"
    namespace = obj["metadata"].get("namespace")
    if namespace and obj["kind"] not in CLUSTER_SCOPED:
        base += f"/namespaces/{namespace}"
    base += f"/{resource}"
    return f"{base}/{obj['metadata']['name']}" if named else base


class LiveCluster:
    """A running stand-in holding `objects`, stored as they are (as the engine or the
    platform team would have applied them)."""

    def __init__(
        self,
        objects: Iterable[dict[str, Any]],
        *,
        crds: Iterable = (),
        namespaces: Iterable[str] = (),
    ) -> None:
        self.sandbox = KubeSandbox(
            token="admin-token", crds=list(crds), namespaces=(*DEFAULT_NAMESPACES, *namespaces)
        )
        self.sandbox.start()
        kinds_first = sorted(objects, key=lambda o: o["kind"] != "Namespace")
        for obj in kinds_first:
            self.sandbox.upsert(obj)
        self._as_admin_of(self.sandbox)

    @classmethod
    def over(cls, sandbox: KubeSandbox) -> LiveCluster:
        """Ask a stand-in that is already running (and that the caller stops)."""
        live = cls.__new__(cls)
        live.sandbox = sandbox
        live._as_admin_of(sandbox)
        return live

    def _as_admin_of(self, sandbox: KubeSandbox) -> None:
        self.url = sandbox.url
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Bearer {sandbox.token}"
        if sandbox.ca_certificate:  # a stand-in over TLS: trust its CA, and only it
            self.session.verify = ca_file_of(sandbox)

    def close(self) -> None:
        self.sandbox.stop()

    def _call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        subject: Subject | None = None,
        query: str = "",
    ) -> requests.Response:
        impersonation = []
        if subject is not None:
            impersonation = [
                ("Impersonate-User", subject.username),
                *(("Impersonate-Group", group) for group in subject.groups),
            ]
        request = requests.Request(method, f"{self.url}{path}{query}", json=body)
        prepared = self.session.prepare_request(request)
        # One header line per group, as kubectl sends them: the API server does not split
        # a comma-joined value (a group name may hold a comma).
        headers = HTTPHeaderDict(prepared.headers)
        for name, value in impersonation:
            headers.add(name, value)
        prepared.headers = headers
        return self.session.send(
            prepared, timeout=30, verify=self.session.verify, cert=self.session.cert
        )

    def can_i(
        self,
        subject: Subject,
        verb: str,
        group: str,
        resource: str,
        namespace: str = "",
        name: str = "",
    ) -> bool:
        resource, _, subresource = resource.partition("/")
        attributes = {
            "verb": verb,
            "group": group,
            "resource": resource,
            "subresource": subresource,
            "namespace": namespace,
            "name": name,
        }
        review = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "spec": {
                "user": subject.username,
                "groups": list(subject.groups),
                "resourceAttributes": attributes,
            },
        }
        answer = self._call("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", review)
        answer.raise_for_status()
        return bool(answer.json()["status"].get("allowed"))

    def attempt(
        self, subject: Subject, method: str, path: str, body: Any = None
    ) -> tuple[str, str]:
        """Make the request as `subject` (writes dry-run): ("allowed" | "RBAC" |
        "admission", the API server's message)."""
        query = "?dryRun=All" if method in {"POST", "PUT", "PATCH", "DELETE"} else ""
        answer = self._call(method, path, body, subject=subject, query=query)
        if answer.status_code < 300:
            return "allowed", ""
        message = answer.json().get("message", answer.text)
        if "ValidatingAdmissionPolicy" in message:
            return "admission", message
        if answer.status_code == 403:
            return "RBAC", message
        raise AssertionError(f"{method} {path} as {subject}: {answer.status_code} {message}")


def whoami(url: str, token: str, verify: bool | str = True) -> requests.Response:
    """The API server at `url` asked who the bearer of `token` is (a SelfSubjectReview)."""
    return requests.post(
        f"{url}/apis/authentication.k8s.io/v1/selfsubjectreviews",
        json={"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
        headers={"Authorization": f"Bearer {token}"},
        timeout=10,
        verify=verify,
    )


def ca_file_of(sandbox: KubeSandbox) -> str:
    """A file holding the CA of a stand-in over TLS (for requests' `verify`), kept while the
    process runs: each stand-in has a CA of its own."""
    assert sandbox.ca_certificate, "the stand-in does not serve TLS"
    with tempfile.NamedTemporaryFile("wb", suffix=".pem", delete=False) as written:
        written.write(sandbox.ca_certificate)
    return written.name
