from django.urls import include, path

from portal.auth import views

urlpatterns = [
    path("login/", views.signin, name="login"),
    path("login/failed/", views.signin_failed, name="login-failed"),
    # callback/ (the redirect URI to register at the provider), authenticate/, logout/
    path("oidc/", include("mozilla_django_oidc.urls")),
]
