from django.contrib import admin
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView

from portal import health, metrics

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("metrics", metrics.metrics_view, name="metrics"),
    path("admin/", admin.site.urls),
    # Pages link the icon; this answers browsers and tools that ask for it anyway.
    path("favicon.ico", RedirectView.as_view(url=static("berth/favicon.svg"), permanent=True)),
    # REST API: /api/v1/…, OpenAPI schema at /api/schema/, Swagger UI at /api/docs/.
    path("api/", include("tenants.api.urls")),
    path("", include("portal.auth.urls")),
    path("", include("tenants.urls")),
]
