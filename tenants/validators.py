"""Validators shared by models, forms and the REST API."""

from __future__ import annotations

import re

from django.core.exceptions import ValidationError

from tenants.naming import DNS_LABEL_MAX

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def validate_dns_label(value: str) -> None:
    """RFC 1123 label, as Kubernetes requires for namespace names."""
    if len(value) > DNS_LABEL_MAX:
        raise ValidationError(
            "%(value)s is %(length)d characters; at most 63 are allowed.",
            code="too_long",
            params={"value": value, "length": len(value)},
        )
    if not _DNS_LABEL.match(value):
        raise ValidationError(
            "%(value)s must consist of lower-case letters, digits and '-', "
            "and start and end with a letter or digit.",
            code="invalid_dns_label",
            params={"value": value},
        )
