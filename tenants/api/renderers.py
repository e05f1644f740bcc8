"""What the API answers besides JSON: a kubeconfig as the file itself, CSV files."""

from __future__ import annotations

from typing import Any

from rest_framework.renderers import BaseRenderer, JSONRenderer

from tenants.selectors.kubeconfig import MEDIA_TYPE


class FileRenderer(BaseRenderer):
    """A file the view answers as text, as it is; a problem (any error) is still JSON,
    `application/problem+json`."""

    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: dict[str, Any] | None = None,
    ) -> bytes:
        if isinstance(data, str):
            return data.encode()
        return JSONRenderer().render(data, accepted_media_type, renderer_context)


class KubeconfigRenderer(FileRenderer):
    """`Accept: application/yaml` or `?format=yaml` where a view offers it: the kubeconfig's
    YAML."""

    media_type = MEDIA_TYPE
    format = "yaml"
    charset = None  # YAML is UTF-8; the type is said as the page's Download says it


class CsvRenderer(FileRenderer):
    """`Accept: text/csv` or `?format=csv` where a view offers it."""

    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"


class CatalogRenderer(FileRenderer):
    """Backstage's catalog-info.yaml: YAML documents, as a URL location reads them."""

    media_type = "application/yaml"
    format = "yaml"
    charset = "utf-8"
