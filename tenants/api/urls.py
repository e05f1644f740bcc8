"""/api/: the versioned API under v1/, the OpenAPI schema, its docs, and problem types."""

from csp.decorators import csp_update
from django.http import Http404, HttpRequest, JsonResponse
from django.urls import include, path, re_path
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework.routers import SimpleRouter

from tenants.api import schema  # noqa: F401 - registers the OpenAPI extensions
from tenants.api.exceptions import PROBLEM_TYPES, problem_response, problem_type
from tenants.api.views import (
    access_grants,
    access_map,
    audit,
    backstage,
    budget_alerts,
    campaigns,
    costs,
    deploy_tokens,
    environments,
    focus,
    me,
    namespaces,
    policy,
    requests,
    sleep,
    tenants,
    truth,
    usage_history,
)
from tenants.api.views.base import DNS_LABEL, ID

app_name = "api"

router = SimpleRouter()
router.register("tenants", tenants.TenantViewSet, basename="tenant")
router.register("clusters", tenants.ClusterViewSet, basename="cluster")
router.register("tiers", tenants.TierViewSet, basename="tier")
router.register("requests", requests.RequestViewSet, basename="request")
router.register("namespaces", namespaces.NamespaceViewSet, basename="namespace")
router.register("projects", namespaces.ProjectViewSet, basename="project")
router.register("audit-events", audit.AuditEventViewSet, basename="auditevent")
router.register("environments", environments.EphemeralEnvironmentViewSet, basename="environment")
router.register("access-grants", access_grants.AccessGrantViewSet, basename="access-grant")


def problem_type_page(request: HttpRequest, slug: str) -> JsonResponse:
    """What a problem `type` means: GET the URI reference an error body names."""
    if slug not in PROBLEM_TYPES:
        raise Http404
    title, description = PROBLEM_TYPES[slug]
    return JsonResponse({"type": problem_type(slug), "title": title, "description": description})


@csrf_exempt  # nothing here to protect: an unknown path is 404 for every method
def not_found(request: HttpRequest, *args: object, **kwargs: object) -> JsonResponse:
    detail = "No such API endpoint."
    if not request.path.endswith("/"):
        detail += " API paths end with a slash."
    return problem_response(request, 404, "not-found", detail)


urlpatterns = [
    path("v1/", include(router.urls)),
    path("v1/me/", me.MeView.as_view(), name="me"),
    path("v1/campaigns/", campaigns.CampaignListView.as_view(), name="campaign-list"),
    re_path(
        rf"^v1/campaigns/(?P<pk>{ID})/$",
        campaigns.CampaignDetailView.as_view(),
        name="campaign-detail",
    ),
    re_path(
        rf"^v1/campaigns/(?P<pk>{ID})/(?P<move>approve|reject|pause|resume|rollback)/$",
        campaigns.CampaignMoveView.as_view(),
        name="campaign-move",
    ),
    path("v1/policy/what-if/", policy.PolicyWhatIfView.as_view(), name="policy-what-if"),
    path(
        "v1/backstage/catalog-info.yaml",
        backstage.BackstageCatalogView.as_view(),
        name="backstage-catalog",
    ),
    re_path(
        rf"^v1/backstage/(?P<slug>{DNS_LABEL})/catalog-info\.yaml$",
        backstage.BackstageTenantCatalogView.as_view(),
        name="backstage-tenant-catalog",
    ),
    path("v1/access/", access_map.AccessSearchView.as_view(), name="access-search"),
    re_path(
        r"^v1/access/groups/(?P<group>[^\x00-\x1f]{1,255})/$",
        access_map.GroupAccessView.as_view(),
        name="access-group",
    ),
    re_path(
        r"^v1/access/people/(?P<username>[\w.@+-]{1,150})/$",
        access_map.PersonAccessView.as_view(),
        name="access-person",
    ),
    re_path(
        rf"^v1/access/namespaces/(?P<name>{DNS_LABEL})/$",
        access_map.NamespaceAccessView.as_view(),
        name="access-namespace",
    ),
    re_path(
        rf"^v1/tenants/(?P<slug>{DNS_LABEL})/environment-rules/$",
        tenants.EnvironmentRulesView.as_view(),
        name="environment-rules",
    ),
    re_path(
        rf"^v1/tenants/(?P<slug>{DNS_LABEL})/costs/$",
        costs.TenantCostsView.as_view(),
        name="tenant-costs",
    ),
    re_path(
        rf"^v1/tenants/(?P<slug>{DNS_LABEL})/costs/history/$",
        usage_history.UsageHistoryView.as_view(),
        name="tenant-costs-history",
    ),
    path("v1/costs/", costs.WindowCostsView.as_view(), name="costs-over-window"),
    path("v1/costs/adjustments/", costs.AdjustmentsView.as_view(), name="cost-adjustments"),
    re_path(
        rf"^v1/tenants/(?P<slug>{DNS_LABEL})/budget-alerts/$",
        budget_alerts.BudgetAlertsView.as_view(),
        name="tenant-budget-alerts",
    ),
    path("v1/costs/focus/", focus.FocusExportView.as_view(), name="costs-focus"),
    re_path(
        rf"^v1/clusters/(?P<name>{DNS_LABEL})/prices/$",
        costs.ClusterPricesView.as_view(),
        name="cluster-prices",
    ),
    re_path(
        rf"^v1/tenants/(?P<slug>{DNS_LABEL})/truth/$",
        truth.TruthTableView.as_view(),
        name="truth-table",
    ),
    re_path(
        rf"^v1/tenants/(?P<slug>{DNS_LABEL})/truth/refresh/$",
        truth.TruthRefreshView.as_view(),
        name="truth-refresh",
    ),
    re_path(
        rf"^v1/tenants/(?P<slug>{DNS_LABEL})/truth/repair/$",
        truth.TruthRepairView.as_view(),
        name="truth-repair",
    ),
    re_path(
        rf"^v1/requests/(?P<pk>{ID})/runs/$",
        requests.RequestRunsView.as_view(),
        name="request-runs",
    ),
    re_path(
        rf"^v1/namespaces/(?P<namespace>{DNS_LABEL})/kubeconfig/$",
        namespaces.NamespaceKubeconfigView.as_view(),
        name="namespace-kubeconfig",
    ),
    re_path(
        rf"^v1/namespaces/(?P<namespace>{DNS_LABEL})/wake/$",
        sleep.NamespaceWakeView.as_view(),
        name="namespace-wake",
    ),
    re_path(
        rf"^v1/namespaces/(?P<namespace>{DNS_LABEL})/deploy-tokens/$",
        deploy_tokens.NamespaceDeployTokensView.as_view(),
        name="namespace-deploy-tokens",
    ),
    re_path(
        rf"^v1/deploy-tokens/(?P<pk>{ID})/revoke/$",
        deploy_tokens.DeployTokenRevokeView.as_view(),
        name="deploy-token-revoke",
    ),
    re_path(
        rf"^v1/projects/(?P<pk>{ID})/environments/$",
        namespaces.ProjectEnvironmentsView.as_view(),
        name="project-environments",
    ),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    # The split view serves its start-up script as a file: no inline script (CSP). Swagger
    # UI sets inline styles, allowed on this page alone.
    path(
        "docs/",
        csp_update({"style-src": "'unsafe-inline'"})(
            SpectacularSwaggerSplitView.as_view(url_name="api:schema")
        ),
        name="docs",
    ),
    path("problems/<slug:slug>", problem_type_page, name="problem-type"),
    re_path(r"^", not_found),
]
