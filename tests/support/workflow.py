"""Taking requests through the workflow in tests, the way people and policy would."""

from tenants import services
from tenants.choices import RequestState
from tenants.models import Request
from tenants.selectors import review


def approve_if_needed(tenancy_request: Request, *, approver) -> Request:
    """Approve as `approver` unless the policy already approved it automatically."""
    if tenancy_request.state != RequestState.SUBMITTED:
        return tenancy_request
    return services.approve_request(
        request_id=tenancy_request.pk,
        approver=approver,
        plan_digest=review(tenancy_request).digest,
    )
