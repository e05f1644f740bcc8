"""Django forms of the domain's pages, one module per noun: requests (and deciding them),
environments (and their rules), policy (approval rules), tenants (onboarding), tokens,
budget alerts (a tenant's monthly cost alert), showback (a closed month's adjustment)."""

from tenants.forms.budget_alerts import CostAlertForm
from tenants.forms.campaigns import CampaignForm
from tenants.forms.environments import (
    EndEnvironmentForm,
    EnvironmentRulesForm,
    ExtendEnvironmentForm,
    TryEnvironmentRulesForm,
    rules_to_yaml,
)
from tenants.forms.policy import ApprovalRuleForm, WhatIfForm
from tenants.forms.preferences import NotificationsForm
from tenants.forms.requests import (
    REQUEST_FORMS,
    ApproveForm,
    ApproveTogetherForm,
    CommentForm,
    RejectForm,
)
from tenants.forms.showback import AdjustmentForm
from tenants.forms.tenants import TenantOnboardingForm
from tenants.forms.tokens import ApiTokenForm, DeployTokenForm

__all__ = [
    "AdjustmentForm",
    "CampaignForm",
    "CostAlertForm",
    "REQUEST_FORMS",
    "ApiTokenForm",
    "DeployTokenForm",
    "ApprovalRuleForm",
    "WhatIfForm",
    "ApproveForm",
    "ApproveTogetherForm",
    "CommentForm",
    "NotificationsForm",
    "EndEnvironmentForm",
    "EnvironmentRulesForm",
    "ExtendEnvironmentForm",
    "RejectForm",
    "TenantOnboardingForm",
    "TryEnvironmentRulesForm",
    "rules_to_yaml",
]
