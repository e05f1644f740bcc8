from django.urls import path

from tenants import views

urlpatterns = [
    path("", views.home, name="home"),
    path("tenants/new/", views.tenant_onboard, name="tenant-onboard"),
    path("tenants/<slug:slug>/", views.tenant_detail, name="tenant-detail"),
    path("tenants/<slug:slug>/request/", views.request_new, name="request-new"),
    path("tenants/<slug:slug>/request/<slug:kind>/", views.request_form, name="request-form"),
    path("tenants/<slug:slug>/name-preview/", views.name_preview, name="name-preview"),
    path("tenants/<slug:slug>/environment-preview/", views.environment_preview,
         name="environment-preview"),
    path("tenants/<slug:slug>/environment-rules/", views.environment_rules_page,
         name="environment-rules"),
    path("approvals/", views.approval_queue, name="approval-queue"),
    path("audit/", views.audit_log, name="audit-log"),
    path("policy/", views.rule_list, name="rule-list"),
    path("policy/new/", views.rule_edit, name="rule-new"),
    path("policy/<int:pk>/", views.rule_edit, name="rule-edit"),
    path("requests/<int:pk>/", views.request_detail, name="request-detail"),
    path("requests/<int:pk>/progress/", views.request_progress, name="request-progress"),
    path("requests/<int:pk>/retry/", views.request_retry, name="request-retry"),
    path("requests/<int:pk>/approve/", views.request_approve, name="request-approve"),
    path("requests/<int:pk>/reject/", views.request_reject, name="request-reject"),
    path("requests/<int:pk>/cancel/", views.request_cancel, name="request-cancel"),
    path("requests/<int:pk>/comment/", views.request_comment, name="request-comment"),
    path("namespaces/<int:pk>/", views.namespace_detail, name="namespace-detail"),
    path("environments/<int:pk>/", views.environment_detail, name="environment-detail"),
    path("environments/<int:pk>/extend/", views.environment_extend, name="environment-extend"),
    path("environments/<int:pk>/end/", views.environment_end, name="environment-end"),
    path("tokens/", views.api_tokens, name="api-tokens"),
    path("tokens/<int:pk>/revoke/", views.api_token_revoke, name="api-token-revoke"),
]
