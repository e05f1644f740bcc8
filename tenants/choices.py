"""Every enumeration of the tenancy domain, in one place."""

from django.db import models


class Role(models.TextChoices):
    OWNER = "owner", "Owner"
    MEMBER = "member", "Member"
    VIEWER = "viewer", "Viewer"


class MembershipSource(models.TextChoices):
    OIDC = "oidc", "Identity provider groups"
    MANUAL = "manual", "Set by a platform admin"


class ClusterAuth(models.TextChoices):
    TOKEN = "token", "Bearer token + CA certificate"
    KUBECONFIG = "kubeconfig", "Kubeconfig"
    IN_CLUSTER = "in_cluster", "In-cluster service account"


class GuardrailsMode(models.TextChoices):
    # Berth installs its admission policies and tenant roles, and provisions a tenant
    # namespace only where they are present and current (provisioning.reconcile.guardrails).
    BERTH = "berth", "installed and checked by Berth"
    # The platform fences tenants with its own admission control (Kyverno, Gatekeeper,
    # Capsule...): Berth neither installs nor checks, and says so wherever it shows it.
    EXTERNAL = "external", "the platform's own (not checked by Berth)"


class PodSecurityLevel(models.TextChoices):
    PRIVILEGED = "privileged", "Privileged"
    BASELINE = "baseline", "Baseline"
    RESTRICTED = "restricted", "Restricted"


class NetworkPreset(models.TextChoices):
    # Both presets start from default-deny and allow same-namespace traffic and DNS.
    ISOLATED = "isolated", "Isolated: same namespace and DNS only"
    INGRESS = "ingress", "Isolated, plus traffic from the ingress controller"


class PolicyOutcome(models.TextChoices):
    AUTO_APPROVE = "auto_approve", "Approve automatically"
    REQUIRE = "require", "Require approvals"
    DENY = "deny", "Deny"


class ApproverRole(models.TextChoices):
    PLATFORM_ADMIN = "platform_admin", "Platform admin"
    TENANT_OWNER = "tenant_owner", "Tenant owner (or platform admin)"


class GitOpsEngine(models.TextChoices):
    ARGOCD = "argocd", "Argo CD"
    ARGOCD_KARGO = "argocd_kargo", "Argo CD + Kargo"
    FLUX = "flux", "Flux"


class ForgeKind(models.TextChoices):
    """The forge a tenant's repository lives on, whose API opens its pull requests."""

    GITHUB = "github", "GitHub / GitHub Enterprise"
    GITLAB = "gitlab", "GitLab"
    GITEA = "gitea", "Gitea / Forgejo"


class PullRequestState(models.TextChoices):
    OPEN = "open", "Open"
    MERGED = "merged", "Merged"
    CLOSED = "closed", "Closed without merging"


class NamespaceState(models.TextChoices):
    # Claimed by a request awaiting a decision: the name is taken and counts against budget.
    REQUESTED = "requested", "Requested"
    PENDING = "pending", "Pending"
    ACTIVE = "active", "Active"
    DECOMMISSIONING = "decommissioning", "Decommissioning"
    DECOMMISSIONED = "decommissioned", "Decommissioned"


class NamePurpose(models.TextChoices):
    """What a namespace name is for (tenants.models.NamespaceClaim): one purpose per name."""

    TIER = "tier", "tier namespace"  # <tenant>-<app>-<tier>
    EPHEMERAL = "ephemeral", "ephemeral environment's namespace"
    SHARED = "shared", "namespace shared by ephemeral environments"
    KARGO = "kargo", "Kargo project namespace"  # <tenant>-<project>-kargo
    ARGOCD_APPS = "argocd_apps", "Argo CD applications namespace"  # <tenant>-apps
    GITOPS = "gitops", "Flux GitOps namespace"  # <tenant>-gitops
    PLATFORM = "platform", "platform namespace"  # kube-system, argocd, flux-system, ...
    FOUND = "found", "namespace found on the cluster"  # there before Berth; not Berth's
    BERTH = "berth", "Berth's own namespace"


class RequestKind(models.TextChoices):
    NAMESPACE = "namespace", "New namespace"
    PROJECT = "project", "New project"
    ENVIRONMENT = "environment", "New environment"
    QUOTA_CHANGE = "quota_change", "Quota change"
    DECOMMISSION = "decommission", "Decommission"
    EPHEMERAL = "ephemeral", "Ephemeral environment"
    END_ENVIRONMENT = "end_environment", "End of an ephemeral environment"
    TENANT_SYNC = "tenant_sync", "Tenant's objects on a cluster"
    PROJECT_DECOMMISSION = "project_decommission", "Project decommission"
    TENANT_DECOMMISSION = "tenant_decommission", "Tenant decommission"
    ACCESS = "access", "Access for a person"
    SLEEP = "sleep", "Sleep schedule"


class SleepChoice(models.TextChoices):
    """What a tier lets its namespaces' owners change of their sleep schedule themselves
    (anything else is a platform admin's to approve)."""

    NOTHING = "nothing", "change nothing"
    TIMES = "times", "change the days and times, not stop it"
    ANYTHING = "anything", "change it or turn it off"


class SleepMode(models.TextChoices):
    TIER = "tier", "as its tier says"
    CUSTOM = "custom", "its own schedule"
    NEVER = "never", "never sleeps"


class EnvironmentState(models.TextChoices):
    # An ephemeral environment: its request is being decided or provisioned.
    STARTING = "starting", "Starting"
    LIVE = "live", "Live"
    # Its end request is running: namespace being deleted, GitOps files being removed.
    ENDING = "ending", "Ending"
    ENDED = "ended", "Ended"


class EndCause(models.TextChoices):
    EXPIRED = "expired", "Expired"
    STOPPED = "stopped", "Stopped (CI environment stop)"
    ENDED_BY_USER = "ended", "Ended by a person"


class RequestState(models.TextChoices):
    SUBMITTED = "submitted", "Awaiting approval"
    APPROVED = "approved", "Approved"
    REJECTED = "rejected", "Rejected"
    CANCELLED = "cancelled", "Cancelled"
    PROVISIONING = "provisioning", "Provisioning"
    READY = "ready", "Ready"
    FAILED = "failed", "Failed"
    DECOMMISSIONING = "decommissioning", "Decommissioning"
    DECOMMISSIONED = "decommissioned", "Decommissioned"
    # Merge-request mode: the request's change waits on the forge for a reviewer's merge.
    AWAITING_MERGE = "awaiting_merge", "Awaiting merge"
    # Its pull request was closed without merging: back with its requester, nothing applied.
    RETURNED = "returned", "Returned (pull request closed)"


class Decision(models.TextChoices):
    APPROVE = "approve", "Approved"
    REJECT = "reject", "Rejected"


class RunState(models.TextChoices):
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"


# Upgrade campaigns (tenants.models.campaigns).
class CampaignState(models.TextChoices):
    AWAITING_APPROVAL = "awaiting_approval", "Awaiting approval"
    ROLLING = "rolling", "Rolling out"
    PAUSED = "paused", "Paused"
    DONE = "done", "Done"
    ROLLING_BACK = "rolling_back", "Rolling back"
    ROLLED_BACK = "rolled_back", "Rolled back"
    REJECTED = "rejected", "Rejected"


class TargetState(models.TextChoices):
    PENDING = "pending", "Pending"
    APPLIED = "applied", "Applied"
    FILED = "filed", "Filed as a request"  # a repository's files: its tenant_sync request
    # Merge-request mode: its pin moved, its cluster waits for the repository's merge.
    AWAITING_MERGE = "awaiting_merge", "Awaiting merge"
    # Its pull request was closed unmerged: records, cluster and repository as before.
    RETURNED = "returned", "Returned"
    FAILED = "failed", "Failed"
    ROLLED_BACK = "rolled_back", "Rolled back"


# What each audit action says of its actor, as the history and the audit log show it
# ("alice approved the request"); the stored name stays the API's and the CSV's.
AUDIT_ACTIONS = {
    "request.submit": "submitted the request",
    "request.denied": "submitted a request the approval rules deny",
    "request.approval_recorded": "approved the request (more approvals needed)",
    "request.approve": "approved the request",
    "request.reject": "rejected the request",
    "request.cancel": "cancelled the request",
    "request.return_to_approval": "sent the request back for approval: its plan changed",
    "request.start_provisioning": "started provisioning",
    "request.mark_ready": "finished provisioning: ready",
    "request.mark_failed": "stopped provisioning: failed",
    "request.retry": "retried provisioning",
    "request.start_decommission": "started decommissioning",
    "request.mark_decommissioned": "finished decommissioning",
    "request.await_merge": "opened a pull request and waits for its merge",
    "request.resume_merged": "went on after the pull request was merged",
    "request.return_unmerged": "sent the request back: its pull request was closed unmerged",
    "request.comment": "commented",
    "request.approve.refused": "tried to approve the request and was refused",
    "request.reject.refused": "tried to reject the request and was refused",
    "tenant.onboard": "onboarded the tenant",
    "tenant.update": "changed the tenant",
    "tenant.repair": "repaired the tenant's objects",
    "tenant.retire": "retired the tenant",
    "tenant.retire_refused": "could not retire the tenant yet",
    "tenant.environment_rules": "changed the environment rules",
    "tenant_sync.refused": "refused to sync the tenant's objects",
    "membership.add": "got a role in the tenant",
    "membership.change": "had their role changed",
    "membership.remove": "lost their role in the tenant",
    "user.notifications": "changed their notification settings",
    "user.platform_admin.grant": "became a platform admin",
    "user.platform_admin.revoke": "stopped being a platform admin",
    "policy.rule_saved": "saved an approval rule",
    "api_token.create": "created an API token",
    "api_token.revoke": "revoked an API token",
    "environment.create": "started an ephemeral environment",
    "environment.extend": "extended an ephemeral environment",
    "environment.expiry_warning": "warned that an ephemeral environment expires soon",
    "environment.ended": "ended an ephemeral environment",
    "campaign.create": "started an upgrade campaign",
    "campaign.approved": "approved the upgrade campaign",
    "campaign.rejected": "rejected the upgrade campaign",
    "campaign.paused": "paused the upgrade campaign",
    "campaign.resumed": "resumed the upgrade campaign",
    "campaign.rolling back": "started rolling the upgrade campaign back",
    "campaign.rollback_paused": "paused rolling the upgrade campaign back",
    "campaign.rolled_back": "rolled the upgrade campaign back",
    "campaign.done": "finished the upgrade campaign",
    "cluster.create": "registered the cluster",
    "cluster.update": "changed the cluster",
    "install_guardrails": "installed the guardrails",
    "install_guardrails.failed": "could not install the guardrails",
    "namespace.woken": "woke the namespace on demand",
    "namespace.slept": "put the namespace to sleep",
    "namespace.woke": "woke the namespace",
}


class AllocationChange(models.TextChoices):
    """Why a namespace's allocation (showback's history) began or ended."""

    READY = "ready", "Ready"
    QUOTA = "quota", "quota changed"
    HIBERNATED = "hibernated", "hibernated"
    WOKEN = "woken", "woken"
    DECOMMISSIONED = "decommissioned", "decommissioned"


class ChargeKind(models.TextChoices):
    """A closed month's row: what the month's allocation cost, or a dated correction."""

    CHARGE = "charge", "charge"
    ADJUSTMENT = "adjustment", "adjustment"


class BudgetMeasure(models.TextChoices):
    """What a tenant's budget alert measures: its month's cost against the threshold its
    owners set, or one dimension of its quota budget."""

    COST = "cost", "monthly cost"
    CPU = "cpu", "CPU budget"
    MEMORY = "memory", "memory budget"
    STORAGE = "storage", "storage budget"
    NAMESPACES = "namespaces", "namespace budget"
