"""Onboarding a tenant in the browser: the form makes a tenant ready for requests, and
refuses a commit link without its placeholder or a clashing prefix, keeping what was
typed."""

from tenants.models import AuditEvent, Tenant

# What every onboarding here fills in alike: the branch and the budget.
BRANCH_AND_BUDGET = {
    "branch": "main",
    "cpu": "4",
    "memory": "8Gi",
    "storage": "50Gi",
    "namespaces": 5,
}


def onboard(client, demo_world, fields: dict):
    """The onboarding form sent by a platform admin."""
    client.force_login(demo_world["admin"])
    return client.post("/tenants/new/", {**BRANCH_AND_BUDGET, **fields})


def test_onboarding_creates_a_tenant_ready_for_requests(client, demo_world):
    response = onboard(
        client,
        demo_world,
        {
            "slug": "ledger",
            "name": "Ledger team",
            "owner_groups": "ledger-owners",
            "member_groups": "ledger-devs, ledger-contractors",
            "viewer_groups": "",
            "repo_url": "https://git.example.com/ledger/deploy.git",
            "path": "clusters/prod",
            "credentials": "ghp_secret_token_value",
            "engine": "flux",
            "commit_url": "https://git.example.com/ledger/deploy/commit/{sha}",
            "clusters": [demo_world["tenant"].allowed_clusters.get().pk],
            "tiers": list(demo_world["tenant"].allowed_tiers.values_list("pk", flat=True)),
            "allowed_domains": "ledger.example.com",
            "notify_emails": "ledger@example.com",
        },
    )

    assert response.status_code == 302
    tenant = Tenant.objects.get(slug="ledger")
    assert tenant.member_groups == ["ledger-devs", "ledger-contractors"]
    assert tenant.budget_memory_mib == 8192
    assert tenant.gitops_credentials == "ghp_secret_token_value"
    assert tenant.commit_link("abc") == "https://git.example.com/ledger/deploy/commit/abc"
    event = AuditEvent.objects.get(action="tenant.onboard")
    assert "ghp_secret_token_value" not in str(event.after)


def test_onboarding_refuses_a_commit_link_without_its_placeholder(client, demo_world):
    page = onboard(
        client,
        demo_world,
        {
            "slug": "ledger",
            "name": "Ledger team",
            "engine": "argocd",
            "commit_url": "https://git.example.com/ledger/deploy/commit/",
        },
    ).content.decode()
    assert "must hold {sha} once" in page
    assert not Tenant.objects.filter(slug="ledger").exists()


def test_onboarding_refuses_a_clashing_prefix_and_keeps_what_was_typed(client, demo_world):
    fields = {"slug": "payments-eu", "name": "Payments EU", "engine": "argocd"}
    page = onboard(client, demo_world, fields).content.decode()
    assert "share a namespace prefix" in page
    assert 'value="Payments EU"' in page
    assert not Tenant.objects.filter(slug="payments-eu").exists()
