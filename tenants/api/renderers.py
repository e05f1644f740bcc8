"""What the API answers besides JSON: a kubeconfig as the file itself, CSV files."""

from __future__ import annotations

from typing import Any

from rest_framework.renderers import BaseRenderer, JSONRenderer

from tenants.selectors.kubeconfig import MEDIA_TYPE


class KubeconfigRenderer(BaseRenderer):
    """`Accept: application/yaml` or `?format=yaml` where a view offers it: the kubeconfig's
    YAML as it is. A problem (any error) is still JSON, `application/problem+json`."""

    media_type = MEDIA_TYPE
    format = "yaml"
    charset = None  # YAML is UTF-8; the type is said as the page's Download says it

    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: dict[str, Any] | None = None,
    ) -> bytes:
        if isinstance(data, str):
            return data.encode()
        return JSONRenderer().render(data, accepted_media_type, renderer_context)


class CsvRenderer(BaseRenderer):
    """`Accept: text/csv` or `?format=csv` where a view offers it: the view answers the
    file itself; a problem (any error) is still JSON, `application/problem+json`."""

    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: dict[str, Any] | None = None,
    ) -> bytes:
        if isinstance(data, str):
            return data.encode()
        return JSONRenderer().render(data, accepted_media_type, renderer_context)
