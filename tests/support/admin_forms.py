"""What the Django admin's pages and Berth's onboarding page post, for the tests that go
through them."""

from __future__ import annotations


def admin_add_form(**fields: str) -> dict:
    """Everything the admin's "add tenant" page posts, no memberships; `fields` on top."""
    return {
        "slug": "ledger",
        "name": "Ledger team",
        "owner_groups": "[]",
        "member_groups": "[]",
        "viewer_groups": "[]",
        "gitops_repo_url": "https://git.example.com/ledger.git",
        "gitops_branch": "main",
        "gitops_path": "",
        "gitops_credentials": "",
        "gitops_known_hosts": "",
        "gitops_engine": "argocd",
        "gitops_commit_url": "",
        "budget_cpu_millis": "8000",
        "budget_memory_mib": "16384",
        "budget_storage_gib": "100",
        "budget_namespaces": "10",
        "allowed_domains": "[]",
        "notify_emails": "[]",
        "webhook_url": "",
        "webhook_secret": "",
        "forge_kind": "github",
        "forge_api_url": "",
        "forge_token": "",
        "forge_webhook_secret": "",
        "memberships-TOTAL_FORMS": "0",
        "memberships-INITIAL_FORMS": "0",
        "memberships-MIN_NUM_FORMS": "0",
        "memberships-MAX_NUM_FORMS": "1000",
        **fields,
    }


def onboarding_form(**fields: object) -> dict:
    """What the onboarding page (/tenants/new/) posts for a tenant on Argo CD with a budget
    of 4 cores, 8Gi, 50Gi and five namespaces; `fields` (the slug and name at least) on top."""
    return {
        "branch": "main",
        "engine": "argocd",
        "cpu": "4",
        "memory": "8Gi",
        "storage": "50Gi",
        "namespaces": 5,
        **fields,
    }
