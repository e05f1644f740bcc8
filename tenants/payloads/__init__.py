"""Request payloads, shared by web forms and the REST API: one serializer per kind of
request (declared by its kind, `tenants.kinds`), which checks shape and the tenant's own
limits and returns a normalised payload (quantities as integers in Berth's units,
references by slug/name). Validate through `tenants.kinds.validate_payload`.
"""

from tenants.payloads.fields import APP_NAME_MAX, TtlField

__all__ = ["APP_NAME_MAX", "TtlField"]
