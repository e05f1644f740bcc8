"""The dashboards' filters, stricter for programs: a filter given empty or twice is refused
(400), as the schema says. (The pages' forms send empty values for "any"; a program that
means "any" leaves the parameter out.)"""

from __future__ import annotations

from django_filters.rest_framework import DjangoFilterBackend
from rest_framework.exceptions import ValidationError


class StrictFilterBackend(DjangoFilterBackend):
    def filter_queryset(self, request, queryset, view):  # noqa: ANN001, ANN201 - DRF API
        filterset_class = self.get_filterset_class(view, queryset)
        if filterset_class is None:
            return queryset
        given = sorted(set(filterset_class.base_filters) & set(request.query_params))
        if not given:
            # With none of its parameters a filterset filters nothing, but building and
            # validating its form cost a tenth of a list call.
            return queryset
        for name in given:
            values = request.query_params.getlist(name)
            if len(values) > 1:
                raise ValidationError({name: ["Give it once."]})
            if not values[0]:
                raise ValidationError({name: ["Leave it out rather than send it empty."]})
        return super().filter_queryset(request, queryset, view)
