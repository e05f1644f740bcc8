"""Writes of the tenancy domain: one module per noun, each function keyword-only, each
change audited. A Request changes state only through `lifecycle`.

    requests      submit, reject, cancel, retry, comment
    approvals     approve, alone or together, bound to the plan digest the approver saw
    budget_alerts  a tenant's monthly cost alert; 80 % and 100 % of it or of its budget, told
    claims        the names a waiting request holds
    lifecycle     the transition table, and the transitions the engine reports through
    environments  ephemeral environments: ensure (CI), extend, end, expire, warn
    rules         approval rules and environment rules, and trying rules before saving
    prices        showback prices per cluster, dated
    allocations   showback history: what each namespace held, from when to when
    access        access on request: ask for a role on a namespace for a while; revoke
    grants        an access request's grant recorded, started, granted
    showback      closing months, adjustments
    onboarding    tenants: onboard, change, and the requests that apply their objects
    repository_checks  whether the tenant's repository can be read: queued, answered
    clusters      clusters: add, change
    tokens        personal API tokens
    deploy_tokens  a pipeline's short-lived token for one namespace: mint, revoke, remove
    sleep         hibernation: wake a namespace on demand, ask for its sleep schedule
"""

from tenants.services.access import (
    end_unentitled_grants,
    may_revoke,
    record_grant_kubeconfig,
    request_access,
    revoke_grant,
)
from tenants.services.approvals import APPROVE_TOGETHER_MAX, approve_request, approve_together
from tenants.services.budget_alerts import check_budget_alerts, set_cost_alert
from tenants.services.campaigns import (
    CAMPAIGN_MOVES,
    CampaignMove,
    approve_campaign,
    create_campaign,
    pause_campaign,
    reject_campaign,
    resume_campaign,
    roll_back_campaign,
)
from tenants.services.clusters import save_cluster
from tenants.services.deploy_tokens import (
    end_unentitled_deploy_tokens,
    mint_deploy_token,
    remove_spent_deploy_tokens,
    revoke_deploy_token,
)
from tenants.services.environments import (
    end_environment,
    ensure_environment,
    environments_to_warn,
    ephemeral_preview,
    expire_environments,
    extend_environment,
)
from tenants.services.lifecycle import (
    TRANSITIONS,
    await_merge,
    mark_all_ready,
    mark_decommissioned,
    mark_failed,
    mark_ready,
    return_to_approval,
    start_decommission,
    start_provisioning,
    start_provisioning_all,
)
from tenants.services.onboarding import (
    onboard_tenant,
    request_tenant_sync,
    retire_tenant,
    update_tenant,
)
from tenants.services.preferences import set_muted_notifications
from tenants.services.prices import prices_in_force, set_cluster_prices
from tenants.services.pull_requests import (
    BadSignature,
    UnknownPullRequest,
    pull_request_closed,
    pull_request_merged,
    receive_forge_event,
    receive_gitlab_event,
)
from tenants.services.repository_checks import queue_repository_check, record_repository_check
from tenants.services.requests import (
    add_comment,
    cancel_request,
    reject_request,
    retry_request,
    submit_request,
)
from tenants.services.rules import (
    MAX_ENVIRONMENT_RULES,
    proposed_from,
    replace_environment_rules,
    save_approval_rule,
    try_approval_rules,
)
from tenants.services.showback import add_adjustment, close_due_months, close_month
from tenants.services.sleep import (
    may_wake,
    request_sleep_schedule,
    settle_sleep_soon,
    wake_namespace,
)
from tenants.services.tokens import create_api_token, revoke_api_token
from tenants.services.truth import repair_truth

__all__ = [
    "end_unentitled_grants",
    "may_revoke",
    "record_grant_kubeconfig",
    "may_wake",
    "request_access",
    "request_sleep_schedule",
    "settle_sleep_soon",
    "wake_namespace",
    "revoke_grant",
    "APPROVE_TOGETHER_MAX",
    "CAMPAIGN_MOVES",
    "CampaignMove",
    "MAX_ENVIRONMENT_RULES",
    "TRANSITIONS",
    "BadSignature",
    "UnknownPullRequest",
    "await_merge",
    "pull_request_closed",
    "pull_request_merged",
    "receive_forge_event",
    "receive_gitlab_event",
    "add_comment",
    "approve_campaign",
    "approve_request",
    "approve_together",
    "cancel_request",
    "check_budget_alerts",
    "create_api_token",
    "create_campaign",
    "end_environment",
    "ensure_environment",
    "environments_to_warn",
    "ephemeral_preview",
    "expire_environments",
    "extend_environment",
    "mark_all_ready",
    "mark_decommissioned",
    "mark_failed",
    "mark_ready",
    "mint_deploy_token",
    "onboard_tenant",
    "pause_campaign",
    "proposed_from",
    "queue_repository_check",
    "record_repository_check",
    "reject_campaign",
    "reject_request",
    "remove_spent_deploy_tokens",
    "repair_truth",
    "replace_environment_rules",
    "request_tenant_sync",
    "resume_campaign",
    "retire_tenant",
    "retry_request",
    "return_to_approval",
    "revoke_api_token",
    "revoke_deploy_token",
    "end_unentitled_deploy_tokens",
    "roll_back_campaign",
    "save_approval_rule",
    "save_cluster",
    "add_adjustment",
    "close_due_months",
    "close_month",
    "prices_in_force",
    "set_cluster_prices",
    "set_cost_alert",
    "set_muted_notifications",
    "start_decommission",
    "start_provisioning",
    "start_provisioning_all",
    "submit_request",
    "try_approval_rules",
    "update_tenant",
]
