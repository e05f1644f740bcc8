from django.contrib.auth import get_user_model
from django.contrib.auth.views import LoginView
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from portal.devidp import demo_password


def accounts() -> list[dict]:
    users = get_user_model().objects.filter(is_active=True).prefetch_related("groups")
    return [
        {
            "username": user.username,
            "name": user.get_full_name(),
            "password": demo_password(user.username),
            "groups": sorted(group.name for group in user.groups.all()),
        }
        for user in users.order_by("username")
    ]


class DemoLoginView(LoginView):
    template_name = "devidp/login.html"

    def get_context_data(self, **kwargs: object) -> dict:
        return {**super().get_context_data(**kwargs), "accounts": accounts()}


def index(request: HttpRequest) -> HttpResponse:
    return render(request, "devidp/index.html", {"accounts": accounts()})
