"""What the API reads and writes, one module per resource. Serializers shape data; they
never save: the views hand validated data to tenants.services. Request payloads are
validated per kind by tenants.payloads (inside services.submit_request), exactly as for
the web forms."""

from tenants.api.serializers.audit import AuditEventSerializer
from tenants.api.serializers.environments import (
    EnvironmentEndSerializer,
    EnvironmentExtendSerializer,
    EnvironmentRuleSerializer,
    EnvironmentRulesSerializer,
    EnvironmentStopSerializer,
    EphemeralEnvironmentCreateSerializer,
    EphemeralEnvironmentPreviewSerializer,
    EphemeralEnvironmentSerializer,
)
from tenants.api.serializers.me import (
    MembershipSummarySerializer,
    MeSerializer,
    MeUpdateSerializer,
    token_summary,
)
from tenants.api.serializers.namespaces import (
    NamespaceSerializer,
    ProjectSerializer,
    QuotaSerializer,
)
from tenants.api.serializers.requests import (
    ApprovalSerializer,
    ApproveSerializer,
    CommentCreateSerializer,
    CommentSerializer,
    HistoryEventSerializer,
    PlanSerializer,
    PullRequestSerializer,
    RejectSerializer,
    RequestCreateSerializer,
    RequestDetailSerializer,
    RequestPermissionsSerializer,
    RequestSerializer,
    RunSerializer,
)
from tenants.api.serializers.tenants import (
    BudgetCountSerializer,
    BudgetQuantitySerializer,
    BudgetSerializer,
    ClusterSerializer,
    TenantCreateSerializer,
    TenantDetailSerializer,
    TenantSerializer,
    TierSerializer,
)

__all__ = [
    "ApprovalSerializer",
    "ApproveSerializer",
    "AuditEventSerializer",
    "BudgetCountSerializer",
    "BudgetQuantitySerializer",
    "BudgetSerializer",
    "ClusterSerializer",
    "CommentCreateSerializer",
    "CommentSerializer",
    "EnvironmentEndSerializer",
    "EnvironmentExtendSerializer",
    "EnvironmentRuleSerializer",
    "EnvironmentRulesSerializer",
    "EnvironmentStopSerializer",
    "EphemeralEnvironmentCreateSerializer",
    "EphemeralEnvironmentPreviewSerializer",
    "EphemeralEnvironmentSerializer",
    "HistoryEventSerializer",
    "MeSerializer",
    "MeUpdateSerializer",
    "MembershipSummarySerializer",
    "NamespaceSerializer",
    "PlanSerializer",
    "ProjectSerializer",
    "QuotaSerializer",
    "RejectSerializer",
    "RequestCreateSerializer",
    "PullRequestSerializer",
    "RequestDetailSerializer",
    "RequestPermissionsSerializer",
    "RequestSerializer",
    "RunSerializer",
    "TenantCreateSerializer",
    "TenantDetailSerializer",
    "TenantSerializer",
    "TierSerializer",
    "token_summary",
]
