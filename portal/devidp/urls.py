from django.contrib.auth.views import LogoutView
from django.urls import include, path, re_path
from django.views.decorators.csrf import csrf_exempt

from portal.devidp import tokens, views

urlpatterns = [
    path("", views.index, name="index"),
    path("login/", views.DemoLoginView.as_view(), name="login"),
    path("logout/", LogoutView.as_view(next_page="index"), name="logout"),
    # Before the provider's own: access tokens as JWTs (tokens.py).
    re_path(r"^openid/token/?$", csrf_exempt(tokens.TokenView.as_view())),
    re_path(r"^openid/userinfo/?$", tokens.userinfo),
    path("openid/", include("oidc_provider.urls", namespace="oidc_provider")),
]
