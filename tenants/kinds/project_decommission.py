"""A project leaving a cluster: every namespace it has there."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from tenants.choices import RequestKind
from tenants.kinds.base import Kind, Target
from tenants.models import Namespace
from tenants.payloads.tenancy import ProjectDecommissionPayload


class ProjectDecommissionKind(Kind):
    value = RequestKind.PROJECT_DECOMMISSION
    payload = ProjectDecommissionPayload
    target = Target.CLUSTER
    deduplicated_by = ("project", "cluster")
    decommissions = True
    removes_namespaces = True

    def on_cluster(
        self, namespaces: QuerySet[Namespace], payload: dict[str, Any]
    ) -> QuerySet[Namespace]:
        return namespaces.filter(project__name=payload.get("project", ""))

    def removes(self, payload: dict[str, Any], namespace: Namespace) -> bool:
        # No query for a namespace of no project: a null foreign key reads as None.
        project = namespace.project
        return (
            project is not None
            and payload.get("project") == project.name
            and payload.get("cluster") == namespace.cluster.name
        )


KIND = ProjectDecommissionKind()
