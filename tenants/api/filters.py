"""The dashboards' filters, stricter for programs: a filter given empty or twice is refused
(400), as the schema says. (The pages' forms send empty values for "any"; a program that
means "any" leaves the parameter out.) So is an `ordering` the list cannot sort by: DRF
would quietly fall back to the default order, and the program would page through rows in
an order it did not ask for."""

from __future__ import annotations

from django_filters.rest_framework import DjangoFilterBackend
from rest_framework.exceptions import ValidationError
from rest_framework.filters import OrderingFilter


class StrictFilterBackend(DjangoFilterBackend):
    def filter_queryset(self, request, queryset, view):
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


class StrictOrderingFilter(OrderingFilter):
    ordering_description = (
        "Fields to sort by, comma-separated; a leading - reverses the "
        "order. A field the list cannot sort by is refused (400), the "
        "message naming those it can."
    )

    def get_ordering(self, request, queryset, view):
        values = request.query_params.getlist(self.ordering_param)
        if len(values) > 1:
            raise ValidationError({self.ordering_param: ["Give it once."]})
        if values and not values[0].strip():
            raise ValidationError(
                {self.ordering_param: ["Leave it out rather than send it empty."]}
            )
        return super().get_ordering(request, queryset, view)

    def remove_invalid_fields(self, queryset, fields, view, request):
        valid = super().remove_invalid_fields(queryset, fields, view, request)
        if len(valid) < len(fields):
            unknown = ", ".join(repr(term[:60]) for term in fields if term not in valid)
            allowed = ", ".join(
                sorted(
                    name for name, _ in self.get_valid_fields(queryset, view, {"request": request})
                )
            )
            raise ValidationError(
                {
                    self.ordering_param: [
                        f"Cannot sort by {unknown}. Sort by {allowed}, comma-separated; a leading "
                        "- "
                        "reverses the order."
                    ]
                }
            )
        return valid
