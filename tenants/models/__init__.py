from tenants.models.audit import AuditEvent
from tenants.models.policy import ApprovalRule
from tenants.models.requests import Approval, Comment, Request, Run
from tenants.models.tenancy import Cluster, EnvironmentTier, Membership, Namespace, Project, Tenant
from tenants.models.users import User

__all__ = [
    "Approval",
    "ApprovalRule",
    "AuditEvent",
    "Cluster",
    "Comment",
    "EnvironmentTier",
    "Membership",
    "Namespace",
    "Project",
    "Request",
    "Run",
    "Tenant",
    "User",
]
