from django.contrib import admin
from django.urls import include, path

from portal import health

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("admin/", admin.site.urls),
    path("", include("portal.auth.urls")),
    path("", include("tenants.urls")),
]
