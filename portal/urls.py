from django.contrib import admin
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView

from portal import health, metrics
from portal.auth.views import LogoutView

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("metrics", metrics.metrics_view, name="metrics"),
    # The admin's "Log out" signs out the way the header's "Sign out" does: the provider's
    # session too, and a page that says so (the break-glass admin's way out).
    path("admin/logout/", LogoutView.as_view()),
    path("admin/", admin.site.urls),
    # Pages link the icon; this answers browsers and tools that ask for it anyway. Not a
    # permanent redirect: browsers would keep it past a change of the static file's URL.
    path("favicon.ico", RedirectView.as_view(url=static("berth/favicon.svg"))),
    # REST API: /api/v1/…, OpenAPI schema at /api/schema/, Swagger UI at /api/docs/.
    path("api/", include("tenants.api.urls")),
    path("", include("portal.auth.urls")),
    path("", include("tenants.urls")),
]
