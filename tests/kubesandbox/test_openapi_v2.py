"""``/openapi/v2``: JSON, or the gnostic protobuf kubectl asks for (``kubesandbox.openapiv2``),
with custom resources' schemas as OpenAPI v2 can say them."""

from __future__ import annotations

import urllib3

from kubesandbox import KubeSandbox
from kubesandbox.openapiv2 import structural_v2

from .conftest import raw
from .test_validation import CRDS, WIDGETS_CRD


def test_openapi_v2_is_json_or_protobuf_as_asked(sandbox: KubeSandbox) -> None:
    status, document = raw(sandbox, "GET", "/openapi/v2")
    assert (status, document["swagger"]) == (200, "2.0")
    assert "io.k8s.api.core.v1.ConfigMap" in document["definitions"]
    response = urllib3.request(
        "GET",
        sandbox.url + "/openapi/v2",
        headers={"Accept": "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"},
        timeout=10,
        retries=False,
    )
    assert response.status == 200
    assert response.headers["Content-Type"] == (
        "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
    )
    # A gnostic Document: swagger (1) "2.0" first, the definitions (9) by name.
    assert response.data.startswith(b"\x0a\x032.0")
    assert b"io.k8s.api.core.v1.ConfigMap" in response.data
    assert raw(sandbox, "GET", "/openapi/v2", headers={"Accept": "text/html"})[0] == 406


def test_openapi_v2_publishes_crd_schemas_as_v2_can_say_them(sandbox: KubeSandbox) -> None:
    assert raw(sandbox, "POST", CRDS, WIDGETS_CRD)[0] == 201
    definitions = raw(sandbox, "GET", "/openapi/v2")[1]["definitions"]
    widget = definitions["com.example.v1.Widget"]
    assert widget["properties"]["metadata"] == {
        "description": "Standard object's metadata.",
        "$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
    }
    v3 = raw(sandbox, "GET", "/openapi/v3/apis/example.com/v1")[1]["components"]["schemas"]
    assert "allOf" in v3["com.example.v1.Widget"]["properties"]["metadata"]


def test_v2_drops_what_it_cannot_say_as_kube_apiserver_does() -> None:
    schema = {
        "type": "object",
        "required": ["name", "note"],
        "properties": {
            "name": {"type": "string"},
            "note": {"type": "string", "nullable": True},
            "port": {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}]},
            "extra": {
                "type": "object",
                "x-kubernetes-preserve-unknown-fields": True,
                "properties": {"a": {"type": "string"}},
            },
            "tags": {"type": "array", "items": {"type": "string", "nullable": True}},
        },
    }
    assert structural_v2(schema) == {
        "type": "object",
        "required": ["name"],  # a nullable field may be null, so absent too
        "properties": {
            "name": {"type": "string"},
            "note": {},
            "port": {"x-kubernetes-int-or-string": True},
            "extra": {"x-kubernetes-preserve-unknown-fields": True},
            "tags": {"type": "array", "items": {}},
        },
    }
