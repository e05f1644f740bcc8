from tenants.models.access import AccessGrant
from tenants.models.audit import AuditEvent
from tenants.models.campaigns import CampaignCommit, CampaignTarget, UpgradeCampaign
from tenants.models.clusters import Cluster, ClusterPrice
from tenants.models.definitions import BundleRevision, TierRevision
from tenants.models.deploy_tokens import DeployToken
from tenants.models.ephemeral import EnvironmentRule, EphemeralEnvironment
from tenants.models.names import NamespaceClaim
from tenants.models.namespaces import Namespace, Project
from tenants.models.policy import ApprovalRule
from tenants.models.pull_requests import PullRequest
from tenants.models.requests import Approval, Comment, Request, Run
from tenants.models.showback import (
    Allocation,
    BudgetAlert,
    ClosedMonth,
    MonthlyCharge,
    UsageDay,
)
from tenants.models.tenancy import Membership, Tenant, TruthTable
from tenants.models.tiers import EnvironmentTier
from tenants.models.tokens import ApiToken, IdempotencyRecord
from tenants.models.users import User

__all__ = [
    "AccessGrant",
    "Allocation",
    "ApiToken",
    "Approval",
    "ApprovalRule",
    "AuditEvent",
    "BudgetAlert",
    "BundleRevision",
    "CampaignCommit",
    "CampaignTarget",
    "Cluster",
    "ClosedMonth",
    "ClusterPrice",
    "Comment",
    "DeployToken",
    "EnvironmentRule",
    "EnvironmentTier",
    "EphemeralEnvironment",
    "IdempotencyRecord",
    "Membership",
    "MonthlyCharge",
    "Namespace",
    "NamespaceClaim",
    "Project",
    "PullRequest",
    "Request",
    "Run",
    "Tenant",
    "TierRevision",
    "TruthTable",
    "UpgradeCampaign",
    "UsageDay",
    "User",
]
