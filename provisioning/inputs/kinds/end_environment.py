"""An ephemeral environment's end: its files, and its namespace if nothing else lives there."""

from __future__ import annotations

from typing import Any

from provisioning.inputs.kinds.base import Draft, PayloadApp
from provisioning.inputs.specs import environment_takes_namespace
from tenants.choices import RequestKind
from tenants.models import EphemeralEnvironment, Request


class EndEnvironmentPlan(PayloadApp):
    value = RequestKind.END_ENVIRONMENT
    changes_namespaces = True
    owns_payload_namespace = True

    def draft(self, tenancy_request: Request) -> Draft:
        environment = EphemeralEnvironment.objects.select_related("namespace__cluster").get(
            pk=tenancy_request.payload["environment"]
        )
        return Draft(
            cluster=environment.namespace.cluster,
            engine=environment.project.gitops_engine,
            project=environment.project.name,
            removed=(
                [environment.namespace.name] if environment_takes_namespace(environment) else []
            ),
        )

    def ending_environment(self, payload: dict[str, Any]) -> int | None:
        return payload["environment"]


KIND = EndEnvironmentPlan()
