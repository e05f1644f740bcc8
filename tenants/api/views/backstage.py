"""/api/v1/backstage/catalog-info.yaml (and /api/v1/backstage/<slug>/catalog-info.yaml): the
tenants the caller may see as Backstage catalog entities, one YAML document each, for a
Backstage URL location to read with the caller's API token. An ETag lets a reader that polls
get 304 while nothing changed."""

from __future__ import annotations

import hashlib

import yaml
from django.http import HttpResponse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.exceptions import NotFound
from rest_framework.request import Request as ApiRequest
from rest_framework.views import APIView

from tenants.api.renderers import CatalogRenderer
from tenants.api.views.base import ApiView
from tenants.selectors.backstage import catalog_entities, catalog_tenants

# A YAML stream: each item below is one document of it.
ENTITY_DOCUMENTS = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["apiVersion", "kind", "metadata", "spec"],
        "properties": {
            "apiVersion": {"type": "string", "enum": ["backstage.io/v1alpha1"]},
            "kind": {"type": "string", "enum": ["Group", "System", "Component", "Resource"]},
            "metadata": {"type": "object", "required": ["name"]},
            "spec": {"type": "object"},
        },
    },
}
RESPONSES = {
    (200, CatalogRenderer.media_type): OpenApiResponse(
        ENTITY_DOCUMENTS,
        description="The entities as a stream of YAML documents, one entity each (described "
        "here as the array of its documents).",
    ),
    304: OpenApiResponse(description="Nothing changed since the ETag given."),
}
DESCRIPTION = (
    "Multi-document YAML (`catalog-info.yaml`) that Backstage's catalog model accepts: a "
    "Group and a System per tenant, a Component per project, a Resource per live namespace "
    "(its Backstage namespace is its cluster's name). Answers 304 to `If-None-Match` with "
    "the last ETag while nothing changed. docs/backstage.md says how to register it."
)


class CatalogView(ApiView, APIView):
    renderer_classes = [CatalogRenderer]

    def answer(self, request: ApiRequest, slug: str | None) -> HttpResponse:
        tenants = list(catalog_tenants(request.user, slug))
        if slug is not None and not tenants:
            raise NotFound()  # not one of the caller's: the same answer as no such tenant
        entities = catalog_entities(tenants, base_url=request.build_absolute_uri("/"))
        body = yaml.safe_dump_all(entities, sort_keys=False, allow_unicode=True)
        etag = '"' + hashlib.sha256(body.encode()).hexdigest()[:32] + '"'
        if etag in request.headers.get("If-None-Match", ""):
            response = HttpResponse(status=304)
        else:
            response = HttpResponse(
                body, content_type=f"{CatalogRenderer.media_type}; charset=utf-8"
            )
        response["ETag"] = etag
        return response


class BackstageCatalogView(CatalogView):
    @extend_schema(
        operation_id="backstage_catalog",
        summary="Backstage catalog entities of every tenant you may see",
        description=DESCRIPTION,
        responses=RESPONSES,
    )
    def get(self, request: ApiRequest) -> HttpResponse:
        return self.answer(request, None)


class BackstageTenantCatalogView(CatalogView):
    @extend_schema(
        operation_id="backstage_tenant_catalog",
        summary="Backstage catalog entities of one tenant (404 unless you may see it)",
        description=DESCRIPTION,
        responses=RESPONSES,
    )
    def get(self, request: ApiRequest, slug: str) -> HttpResponse:
        return self.answer(request, slug)
