from django.urls import path

from tenants import views

urlpatterns = [
    path("", views.home, name="home"),
    path("tenants/<slug:slug>/", views.tenant_detail, name="tenant-detail"),
    path("requests/<int:pk>/", views.request_detail, name="request-detail"),
    path("requests/<int:pk>/progress/", views.request_progress, name="request-progress"),
    path("requests/<int:pk>/retry/", views.request_retry, name="request-retry"),
    path("namespaces/<int:pk>/", views.namespace_detail, name="namespace-detail"),
]
