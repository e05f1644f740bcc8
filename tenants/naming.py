"""Namespace names: `<tenant>-<app>-<tier>`, DNS-1123, at most 63 characters.

When the composed name is too long, only the app part is shortened, and a 6-character
hash of the full name is appended to it: `<tenant>-<app prefix>-<hash>-<tier>`. The tenant
prefix and the tier stay readable, the result is stable for the same input, and two long
names that share a prefix still differ.

Names from an ephemeral environment's rule template (`fit`) keep their start instead: the
first 56 characters, a dash and the hash of the full name.
"""

from __future__ import annotations

import hashlib
import re

# RFC 1123 labels (namespace names) are at most this long.
DNS_LABEL_MAX = 63
HASH_LENGTH = 6


def short_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:HASH_LENGTH]


def namespace_name(tenant: str, app: str, tier: str) -> str:
    full = f"{tenant}-{app}-{tier}"
    if len(full) <= DNS_LABEL_MAX:
        return full
    # Room left for the app part once tenant, tier, the hash and three dashes are placed.
    room = DNS_LABEL_MAX - len(tenant) - len(tier) - HASH_LENGTH - 3
    app_prefix = app[: max(room, 0)].rstrip("-")
    parts = (
        [tenant, app_prefix, short_hash(full), tier]
        if app_prefix
        else [tenant, short_hash(full), tier]
    )
    return "-".join(parts)[:DNS_LABEL_MAX]


def fit(name: str) -> str:
    """A name composed from a template, cut to 63 characters when longer: its start (the
    tenant prefix) is kept, then a dash and a 6-character hash of the whole name."""
    if len(name) <= DNS_LABEL_MAX:
        return name
    keep = name[: DNS_LABEL_MAX - HASH_LENGTH - 1].rstrip("-")
    return f"{keep}-{short_hash(name)}"


def label_value(text: str) -> str:
    """Text (a branch, an environment name) made fit for a DNS label: lower case, every run
    of other characters turned into one dash, no dash at either end."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def was_truncated(tenant: str, app: str, tier: str) -> bool:
    return namespace_name(tenant, app, tier) != f"{tenant}-{app}-{tier}"


RESERVED_NAMES = frozenset({"default", "flux-system"})
RESERVED_PREFIXES = ("kube-", "argocd", "kargo")


def reserved_reason(name: str, *, berth_namespace: str) -> str | None:
    """Why a namespace name belongs to the cluster or its platform, or None if it is free."""
    if name in RESERVED_NAMES or name == berth_namespace:
        return f"{name} is reserved for the cluster's own components."
    for prefix in RESERVED_PREFIXES:
        if name.startswith(prefix):
            return f"{name} is reserved: names starting with {prefix!r} belong to the platform."
    return None


def outside_prefix_reason(name: str, *, tenant: str) -> str | None:
    if not name.startswith(f"{tenant}-"):
        return f"{name} is outside the tenant's prefix: its namespaces start with {tenant}-."
    return None
