"""The end of an ephemeral environment: asked by Berth when it expires, by CI or by a
person from its page, never on the request form."""

from __future__ import annotations

from tenants.choices import RequestKind
from tenants.kinds.base import Kind, Target
from tenants.payloads.environments import EndEnvironmentPayload


class EndEnvironmentKind(Kind):
    value = RequestKind.END_ENVIRONMENT
    payload = EndEnvironmentPayload
    target = Target.NAMESPACE
    asked_elsewhere = (
        "An ephemeral environment is ended from its page or with "
        "POST /api/v1/environments/{id}/end/."
    )
    removes_namespaces = True
    decided_by_rules = False
    quiet = True
    ends_environment = True


KIND = EndEnvironmentKind()
