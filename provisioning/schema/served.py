"""Custom resources' schemas as the target cluster itself serves them.

kubectl validates a custom resource against the cluster's ``/openapi/v3/apis/<group>/
<version>`` document, which the API server builds from the CRDs it actually has: the versions
it serves, as installed. Berth does the same for a cluster it applies to, so a plan is checked
against that cluster and not against whichever CRD files lie on Berth's machine.

A document is fetched once per cluster and group-version and kept for ``ttl`` seconds (a CRD
upgraded on the cluster is seen after that). Asked again, the cluster's ``/openapi/v3`` index
says each document's hash, as client-go reads it: a document of a hash already read is not
fetched and parsed again. A group-version the cluster does not serve (404)
is remembered as absent for as long: its kinds are then checked against ``$BERTH_CRD_DIR``,
the same as for a plan-only cluster; so they are, for a shorter while, when the cluster did
not answer. Nothing here does I/O itself: ``fetch`` does.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

import jsonschema

from provisioning.schema.common import SchemaUnavailable
from provisioning.schema.crds import schema_validator

logger = logging.getLogger(__name__)

# (group, version) -> the OpenAPI v3 document; None when the cluster serves none (404) or is
# not to be asked (plan-only); SchemaUnavailable when it did not answer.
Fetch = Callable[[str, str], Mapping[str, Any] | None]
# () -> each document's path in /openapi/v3's index ("apis/<group>/<version>") and its hash;
# SchemaUnavailable when the cluster did not answer.
Hashes = Callable[[], Mapping[str, str]]
DEFAULT_TTL_SECONDS = 300.0
RETRY_SECONDS = 30.0  # after the cluster did not answer
KNOWN_HASHES = 256


@dataclass(frozen=True, eq=False)
class ServedKind:
    """One kind as a cluster serves it: how to check it and where that came from."""

    namespaced: bool
    validator: jsonschema.protocols.Validator
    source: str  # for people: "the schema cluster prod serves (/openapi/v3/apis/...)"


@dataclass(frozen=True, eq=False)
class _Document:
    fetched_at: float
    # kind -> ServedKind; None: the cluster does not serve this group-version.
    kinds: dict[str, ServedKind] | None


@dataclass
class _Cache:
    lock: threading.Lock = field(default_factory=threading.Lock)
    documents: dict[tuple[str, str, str], _Document] = field(default_factory=dict)
    # (cluster key, hash) -> kinds: the same hash is the same document.
    by_hash: dict[tuple[str, str], dict[str, ServedKind]] = field(default_factory=dict)


_cache = _Cache()


def index_hashes(index: Mapping[str, Any]) -> dict[str, str]:
    """/openapi/v3's index as path -> the hash of its document (each serverRelativeURL's
    ``hash`` parameter, which changes when the document does)."""
    found = {}
    for path, entry in (index.get("paths") or {}).items():
        url = entry.get("serverRelativeURL", "") if isinstance(entry, dict) else ""
        if digest := parse_qs(urlsplit(str(url)).query).get("hash", [""])[0]:
            found[path] = digest
    return found


def forget(cluster: str | None = None, *, hashes: bool = False) -> None:
    """Drop what was fetched (from one cluster, or all): the next check asks the cluster
    again. Documents known by their hash stay known (the same hash is the same document),
    unless `hashes` says to start cold."""
    with _cache.lock:
        for key in [key for key in _cache.documents if cluster in (None, key[0])]:
            del _cache.documents[key]
        if hashes:
            for known in [known for known in _cache.by_hash if cluster in (None, known[0])]:
                del _cache.by_hash[known]


class ServedSchemas:
    """The custom resources' schemas one cluster serves. ``cluster`` names it in messages,
    ``key`` (default: the name) in the cache: checks of the same cluster share what was
    fetched."""

    def __init__(
        self,
        cluster: str,
        fetch: Fetch,
        *,
        key: str = "",
        ttl: float = DEFAULT_TTL_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        hashes: Hashes | None = None,
    ) -> None:
        self.cluster = cluster
        self.key = key or cluster
        self.fetch = fetch
        self.ttl = ttl
        self.clock = clock
        self.hashes = hashes
        self._hashes: Mapping[str, str] | None = None  # asked once, at the first miss

    def kinds(self, group: str, version: str) -> dict[str, ServedKind] | None:
        """The kinds ``group/version`` has on the cluster; None when it serves no such
        group-version (then the caller falls back to the CRD directory)."""
        key = (self.key, group, version)
        now = self.clock()
        with _cache.lock:
            cached = _cache.documents.get(key)
        if cached is not None and now - cached.fetched_at < self.ttl:
            return cached.kinds
        path = _path(group, version)
        try:
            # Outside the lock: one slow cluster must not hold up the others' checks.
            digest = self._hash_of(document_path(group, version))
            with _cache.lock:
                known = _cache.by_hash.get((self.key, digest)) if digest else None
                if known is not None:
                    _cache.documents[key] = _Document(now, known)
                    return known
            document = self.fetch(group, version)
        except SchemaUnavailable as error:
            logger.warning(
                "%s: its custom resources are checked against the CRD directory "
                "($BERTH_CRD_DIR) for now",
                error,
            )
            # Asked again sooner than a fetched document: the cluster may be back.
            with _cache.lock:
                _cache.documents[key] = _Document(now - self.ttl + RETRY_SECONDS, None)
            return None
        if document is None:
            logger.info(
                "no %s from cluster %s: its custom resources of %s/%s are checked "
                "against the CRD directory ($BERTH_CRD_DIR)",
                path,
                self.cluster,
                group,
                version,
            )
            kinds = None
        else:
            kinds = _kinds_in(
                document, group, version, f"the schema cluster {self.cluster} serves ({path})"
            )
            logger.info(
                "custom resources of %s/%s are checked against the schemas cluster "
                "%s serves (%s: %s)",
                group,
                version,
                self.cluster,
                path,
                ", ".join(sorted(kinds)) or "no kinds",
            )
        with _cache.lock:
            _cache.documents[key] = _Document(now, kinds)
            if digest and kinds is not None:
                if len(_cache.by_hash) >= KNOWN_HASHES:
                    del _cache.by_hash[next(iter(_cache.by_hash))]
                _cache.by_hash[(self.key, digest)] = kinds
        return kinds

    def _hash_of(self, path: str) -> str:
        """The hash the cluster's index gives the document at `path`; "" when it gives none."""
        if self.hashes is None:
            return ""
        if self._hashes is None:
            self._hashes = self.hashes()
        return self._hashes.get(path, "")


def document_path(group: str, version: str) -> str:
    """Where /openapi/v3 keeps a group-version's document, as its index names it."""
    return f"apis/{group}/{version}" if group else "api/v1"


def _path(group: str, version: str) -> str:
    return f"/openapi/v3/{document_path(group, version)}"


def _kinds_in(
    document: Mapping[str, Any], group: str, version: str, source: str
) -> dict[str, ServedKind]:
    """Every kind of ``group/version`` an OpenAPI v3 document defines: its component schema
    (found by ``x-kubernetes-group-version-kind``) and whether its paths are namespaced."""
    schemas = (document.get("components") or {}).get("schemas") or {}
    namespaced: dict[str, bool] = {}
    for path, operations in (document.get("paths") or {}).items():
        for operation in (operations or {}).values():
            gvk = (
                operation.get("x-kubernetes-group-version-kind")
                if isinstance(operation, dict)
                else None
            )
            if isinstance(gvk, dict) and (gvk.get("group"), gvk.get("version")) == (group, version):
                kind = gvk.get("kind")
                namespaced[kind] = namespaced.get(kind, False) or "{namespace}" in path
    kinds = {}
    for schema in schemas.values():
        for gvk in schema.get("x-kubernetes-group-version-kind") or []:
            kind = gvk.get("kind")
            if (gvk.get("group"), gvk.get("version")) == (group, version) and kind in namespaced:
                kinds[kind] = ServedKind(namespaced[kind], schema_validator(schema), source)
    return kinds
