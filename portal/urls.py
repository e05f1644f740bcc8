from django.contrib import admin
from django.urls import include, path

from portal import health, metrics

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("metrics", metrics.metrics_view, name="metrics"),
    path("admin/", admin.site.urls),
    # REST API: /api/v1/…, OpenAPI schema at /api/schema/, Swagger UI at /api/docs/.
    path("api/", include("tenants.api.urls")),
    path("", include("portal.auth.urls")),
    path("", include("tenants.urls")),
]
