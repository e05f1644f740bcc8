"""Reads of the tenancy domain, always scoped to what the user may see: one module per noun.

rights        platform admins, tenant roles, who may ask for or decide a request
access_map    what a group, a person or a namespace's bindings come down to everywhere
truth         a tenant's truth table: database, repository, cluster compared
campaigns     upgrade campaigns: grouped diffs, progress, the notices on namespaces
requests      requests, their history, what a person may do with one, the approval queue
reviews       a request as an approver sees it, and the digest an approval binds to
namespaces    namespaces, projects, the name a request would get, their commits
environments  ephemeral environments and the environment rules' preview
budgets       a tenant's budget as people read it
whatif        the approval rules in force, and past decisions to replay others over
attributes    the `request` variable approval rules see
audit         the audit log
deploy_tokens  who may mint a namespace's deploy token, its tokens, their kubeconfig
costs         showback: what a tenant's allocated quota costs at the clusters' prices
cost_chart    a month's costs as the bars of the tenant page's chart
cost_totals   the dashboard's costs card: every tenant's month, summed by the database
"""

from tenants.selectors.access_grants import (
    grants_visible_to,
    live_grant_of,
    live_grants_in,
    namespaces_granted_to,
    visible_grant,
)
from tenants.selectors.access_map import (
    PLATFORM_ADMIN_RIGHTS,
    group_map,
    known_groups,
    namespace_maps,
    person_map,
    search,
    why_may_approve,
)
from tenants.selectors.audit import (
    AuditCursor,
    AuditPage,
    audit_events_visible_to,
    audit_page,
    may_see_audit,
)
from tenants.selectors.budgets import budget_summary, namespaces_using_most
from tenants.selectors.campaigns import (
    campaign,
    campaign_commits,
    campaign_notices,
    campaign_targets,
    campaigns,
    diff_groups,
)
from tenants.selectors.dashboard import admin_dashboard
from tenants.selectors.definitions import definition_of, tier_version
from tenants.selectors.deploy_tokens import (
    deploy_tokens_panel,
    token_kubeconfig,
    visible_deploy_token,
    why_no_deploy_token,
)
from tenants.selectors.environments import (
    end_request_of,
    environment_history,
    environment_of_request,
    environment_rules_preview,
    environments_in,
    environments_visible_to,
    live_environments,
    may_edit_environment_rules,
    may_end_environment,
    may_manage_environment,
    visible_environment,
)
from tenants.selectors.guardrails import guardrails_state, unfenced_clusters
from tenants.selectors.namespaces import (
    commits_for_namespace,
    name_preview,
    namespaces_visible_to,
    projects_visible_to,
    visible_namespace,
    visible_project,
)
from tenants.selectors.requests import (
    LISTED_COLUMNS,
    MOVING_STATES,
    RequestActions,
    commits_of_request,
    decidable_by,
    environment_ended,
    kargo_namespace_of_request,
    may_cancel,
    namespaces_of_request,
    request_actions,
    request_history,
    request_rows_visible_to,
    requests_visible_to,
    visible_request,
)
from tenants.selectors.reviews import (
    QueueReview,
    Review,
    approval_digest,
    policy_digest,
    queue_reviews,
    review,
)
from tenants.selectors.rights import (
    is_platform_admin,
    may_request,
    role_by_tenant,
    role_in,
    tenants_for_user,
    visible_tenant,
    why_cannot_decide,
)
from tenants.selectors.truth import STATE_LABELS, refresh_wait, truth_table
from tenants.selectors.whatif import past_decisions, rules_in_force, rules_with_edit

__all__ = [
    "grants_visible_to",
    "live_grant_of",
    "live_grants_in",
    "namespaces_granted_to",
    "visible_grant",
    "LISTED_COLUMNS",
    "MOVING_STATES",
    "PLATFORM_ADMIN_RIGHTS",
    "RequestActions",
    "Review",
    "STATE_LABELS",
    "admin_dashboard",
    "approval_digest",
    "AuditCursor",
    "AuditPage",
    "audit_events_visible_to",
    "audit_page",
    "budget_summary",
    "campaign",
    "campaign_commits",
    "campaign_notices",
    "campaign_targets",
    "campaigns",
    "commits_for_namespace",
    "commits_of_request",
    "decidable_by",
    "definition_of",
    "deploy_tokens_panel",
    "diff_groups",
    "end_request_of",
    "environment_ended",
    "environment_history",
    "environment_of_request",
    "environment_rules_preview",
    "environments_in",
    "environments_visible_to",
    "group_map",
    "guardrails_state",
    "is_platform_admin",
    "kargo_namespace_of_request",
    "known_groups",
    "live_environments",
    "may_cancel",
    "may_edit_environment_rules",
    "may_end_environment",
    "may_manage_environment",
    "may_request",
    "may_see_audit",
    "name_preview",
    "namespace_maps",
    "namespaces_of_request",
    "namespaces_using_most",
    "namespaces_visible_to",
    "past_decisions",
    "person_map",
    "policy_digest",
    "projects_visible_to",
    "refresh_wait",
    "request_actions",
    "request_history",
    "request_rows_visible_to",
    "requests_visible_to",
    "queue_reviews",
    "QueueReview",
    "review",
    "role_by_tenant",
    "role_in",
    "rules_in_force",
    "rules_with_edit",
    "search",
    "tenants_for_user",
    "tier_version",
    "token_kubeconfig",
    "truth_table",
    "unfenced_clusters",
    "visible_deploy_token",
    "visible_environment",
    "visible_namespace",
    "visible_project",
    "visible_request",
    "visible_tenant",
    "why_cannot_decide",
    "why_may_approve",
    "why_no_deploy_token",
]
