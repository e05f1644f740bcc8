from django.contrib.auth.views import LogoutView
from django.urls import include, path

from portal.devidp import views

urlpatterns = [
    path("", views.index, name="index"),
    path("login/", views.DemoLoginView.as_view(), name="login"),
    path("logout/", LogoutView.as_view(next_page="index"), name="logout"),
    path("openid/", include("oidc_provider.urls", namespace="oidc_provider")),
]
