from django.urls import include, path

from portal.auth import views

urlpatterns = [
    path("login/", views.signin, name="login"),
    path("login/failed/", views.signin_failed, name="login-failed"),
    # Sign-out by POST only; then callback/ (the redirect URI to register at the provider)
    # and authenticate/ from mozilla-django-oidc, with Berth's views (settings).
    path("oidc/logout/", views.LogoutView.as_view(), name="oidc_logout"),
    path("oidc/", include("mozilla_django_oidc.urls")),
]
