"""What every API view shares: authentication, token scopes, an Idempotency-Key on POST,
rows from a selector scoped to the caller, input validated by a serializer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rest_framework.exceptions import NotFound
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request as ApiRequest
from rest_framework.serializers import BaseSerializer

from tenants.api.idempotency import IdempotentMixin
from tenants.api.permissions import TokenHasScope

# Database ids in URLs: digits only, and never more than a bigint holds.
ID = r"[0-9]{1,18}"
# Slugs and names in URLs (tenants, clusters, tiers, namespaces): a DNS label's letters and length.
DNS_LABEL = r"[a-z0-9-]{1,63}"


def validated(serializer: Callable[..., BaseSerializer], data: Any) -> Any:
    """The input as the serializer cleans it; input it refuses is a 400 problem."""
    form = serializer(data=data)
    form.is_valid(raise_exception=True)
    return form.validated_data


class ApiView(IdempotentMixin):
    # What every API view shares: authenticated, token scopes, Idempotency-Key on POST.

    permission_classes = [IsAuthenticated, TokenHasScope]
    scopes: dict[str, str] = {}
    # The model, for the schema; the rows always come from `visible` (a selector).
    queryset: Any = None

    def get_queryset(self) -> Any:
        if getattr(self, "swagger_fake_view", False):  # schema generation: nobody, no URL
            return self.queryset
        return self.visible(self.request.user)

    def visible(self, user: Any) -> Any:
        return self.queryset.all()  # a fresh queryset per request, never the class's

    def check_permissions(self, request: ApiRequest) -> None:
        # An id naming nothing the caller may see is 404 before any right is checked: the
        # answer never tells an unknown id from one outside their tenants or rights.
        if request.user.is_authenticated and self.named_object_visible(request.user) is False:
            raise NotFound()
        super().check_permissions(request)

    def named_object_visible(self, user: Any) -> bool | None:
        """Whether the caller may see the object the URL names; None if it names none."""
        field = getattr(self, "lookup_field", None)
        kwarg = getattr(self, "lookup_url_kwarg", None) or field
        if not field or kwarg not in self.kwargs:
            return None
        return self.visible(user).filter(**{field: self.kwargs[kwarg]}).exists()
