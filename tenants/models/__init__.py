from tenants.models.audit import AuditEvent
from tenants.models.requests import Approval, Request, Run
from tenants.models.tenancy import Cluster, EnvironmentTier, Membership, Namespace, Project, Tenant
from tenants.models.users import User

__all__ = [
    "Approval",
    "AuditEvent",
    "Cluster",
    "EnvironmentTier",
    "Membership",
    "Namespace",
    "Project",
    "Request",
    "Run",
    "Tenant",
    "User",
]
