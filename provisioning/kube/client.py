"""The cluster client: the official Kubernetes client, one cached per cluster and
credentials per process. Objects are applied with server-side apply under the field
manager `berth`; every call is retried as provisioning.kube.errors says.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import yaml
from kubernetes import client as k8s
from kubernetes import config as k8s_config
from kubernetes.client.exceptions import ApiException
from kubernetes.dynamic import DynamicClient
from kubernetes.dynamic.exceptions import ResourceNotFoundError
from kubernetes.watch.watch import iter_resp_lines

from provisioning.kube.connection import ClusterAccess, api_client_for, discovery_cache_file
from provisioning.kube.errors import KubeError, RetryPolicy, describe, with_retries
from provisioning.plan import ObjectRef, ref_of

FIELD_MANAGER = "berth"
# How long a kind the cluster does not serve is taken as missing (kube-green installed later).
MISSING_KIND_SECONDS = 60.0
logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Outcome:
    ref: ObjectRef
    result: str  # created | configured | unchanged | deleted | absent
    attempts: int
    message: str = ""


@dataclass(frozen=True)
class Applied(Outcome):
    resource_version: str = ""  # as the apply left the object


class ClusterClient:
    """One cluster's API client and discovery, reused across tasks in a worker process."""

    def __init__(self, access: ClusterAccess, policy: RetryPolicy) -> None:
        self.access_key = access.key
        self.policy = policy
        try:
            self.api_client = api_client_for(access)
        except (ValueError, k8s_config.ConfigException, yaml.YAMLError) as exc:
            logger.warning("cluster credentials refused by the client: %s", exc)
            raise KubeError(
                "the cluster's credentials or kubeconfig cannot be used; a "
                "platform admin must correct the cluster in Berth",
                status=None,
                transient=False,
            ) from None
        self._dynamic: DynamicClient | None = None
        self._lock = threading.Lock()
        # (apiVersion, kind) -> the discovered resource: the client searches every group's
        # resources again on each lookup, a tenth of an apply's own CPU.
        self._resources: dict[tuple[str, str], Any] = {}
        self._missing: dict[tuple[str, str], float] = {}  # kind -> until when it is missing

    @property
    def dynamic(self) -> DynamicClient:
        with self._lock:
            if self._dynamic is None:
                # Discovery itself may hit a flaky server: retried like any call.
                self._dynamic, _ = self._retry(
                    lambda: DynamicClient(
                        self.api_client, cache_file=discovery_cache_file(self.access_key)
                    ),
                )
            return self._dynamic

    def _retry(self, call):
        return with_retries(self.policy, call, url=self.api_client.configuration.host)

    def _timeout(self) -> dict[str, Any]:
        return {"_request_timeout": self.policy.timeout_seconds}

    def _resource(self, api_version: str, kind: str):
        found = self._resources.get((api_version, kind))
        if found is None:
            found = self._resources[(api_version, kind)] = self.dynamic.resources.get(
                api_version=api_version, kind=kind
            )
        return found

    def serves(self, api_version: str, kind: str, *, fresh: bool = False) -> bool:
        """Whether the cluster serves the kind; one it does not is asked again after a while
        (each miss makes the client read discovery again), or at once when `fresh`."""
        if fresh:  # what the cluster serves now, not what this client read before
            self._resources.pop((api_version, kind), None)
            self.dynamic.resources.invalidate_cache()
        elif self._missing.get((api_version, kind), 0.0) > time.monotonic():
            return False
        try:
            self._retry(lambda: self._resource(api_version, kind))
        except ResourceNotFoundError:
            self._missing[(api_version, kind)] = time.monotonic() + MISSING_KIND_SECONDS
            return False
        self._missing.pop((api_version, kind), None)
        return True

    def version(self) -> str:
        info, _ = self._retry(lambda: k8s.VersionApi(self.api_client).get_code(**self._timeout()))
        return info.git_version

    def openapi_v3(self, path: str = "") -> dict[str, Any] | None:
        """/openapi/v3/<path>: a group-version's document ("apis/<group>/<version>"), or with
        no path the index of them, each with its hash; None when it is not served (404)."""
        path = f"/openapi/v3/{path}".rstrip("/")

        def fetch() -> dict[str, Any] | None:
            request = self.api_client.param_serialize(
                "GET",
                path,
                header_params={"Accept": "application/json"},
                auth_settings=["BearerToken"],
            )
            response = self.api_client.call_api(*request, **self._timeout()).response
            if response.status == 404:
                return None
            if not 200 <= response.status <= 299:
                # Raised as the client would, so that retries and messages are as for any call.
                raise ApiException(
                    status=response.status, reason=response.reason, http_resp=response
                )
            return json.loads(response.data)

        document, _ = self._retry(fetch)
        return document

    def get(self, ref: ObjectRef) -> dict[str, Any] | None:
        resource = self._resource(ref.api_version, ref.kind)

        def fetch() -> dict[str, Any] | None:
            try:
                return resource.get(
                    name=ref.name, namespace=ref.namespace or None, **self._timeout()
                ).to_dict()
            except ApiException as exc:
                if exc.status == 404:
                    return None
                raise

        live, _ = self._retry(fetch)
        return live

    def apply(self, obj: dict[str, Any], *, known_version: str | None = None) -> Applied:
        """Server-side apply, one call: the API answers 201 when it created the object.
        `known_version` is the resourceVersion the caller last saw; the object is
        "unchanged" when the apply left it at that version, else "configured"."""
        ref = ref_of(obj)
        resource = self._resource(ref.api_version, ref.kind)
        # Serialised once here: the client sends a string body as it is, where it would walk
        # a dict to sanitise it and then encode it again on every try.
        body = json.dumps(obj, separators=(",", ":"))

        def apply_once() -> Any:
            return resource.server_side_apply(
                body=body,
                name=ref.name,
                namespace=ref.namespace or None,
                field_manager=FIELD_MANAGER,
                force_conflicts=True,
                serialize=False,  # the status code says whether it was created
                **self._timeout(),
            )

        response, attempts = self._retry(apply_once)
        version = json.loads(response.data)["metadata"].get("resourceVersion", "")
        if response.status == 201:
            result = "created"
        elif known_version is not None and known_version == version:
            result = "unchanged"
        else:
            result = "configured"
        return Applied(ref=ref, result=result, attempts=attempts, resource_version=version)

    def merge_patch(self, ref: ObjectRef, patch: dict[str, Any], *, version: str) -> bool:
        """A merge patch of an object someone else owns (a workload asleep), at the version it
        was read at: False when it is gone or changed since (nothing overwritten)."""
        meta = {**(patch.get("metadata") or {}), "resourceVersion": version}
        options = {"name": ref.name, "namespace": ref.namespace or None, **self._timeout()}

        def patch_once() -> bool:
            try:
                self._resource(ref.api_version, ref.kind).patch(
                    body={**patch, "metadata": meta},
                    content_type="application/merge-patch+json",
                    field_manager=FIELD_MANAGER,
                    **options,
                )
            except ApiException as exc:
                if exc.status in (404, 409):
                    return False
                raise
            return True

        return self._retry(patch_once)[0]

    def delete(self, ref: ObjectRef) -> Outcome:
        resource = self._resource(ref.api_version, ref.kind)

        def delete_once() -> str:
            try:
                resource.delete(
                    name=ref.name,
                    namespace=ref.namespace or None,
                    propagation_policy="Foreground",
                    **self._timeout(),
                )
            except ApiException as exc:
                if exc.status == 404:
                    return "absent"
                raise
            return "deleted"

        result, attempts = self._retry(delete_once)
        return Outcome(ref=ref, result=result, attempts=attempts)

    def request_token(
        self, namespace: str, service_account: str, *, seconds: int, audiences: list[str]
    ) -> tuple[str, Any, list[str]]:
        """A token of the ServiceAccount (TokenRequest): (token, expiry, audiences as the
        API server set them; none asked means its own)."""
        api = k8s.CoreV1Api(self.api_client)
        body = k8s.AuthenticationV1TokenRequest(
            spec=k8s.V1TokenRequestSpec(audiences=audiences, expiration_seconds=seconds)
        )

        def request_once() -> Any:
            return api.create_namespaced_service_account_token(
                service_account, namespace, body, **self._timeout()
            )

        answer, _ = self._retry(request_once)
        return (
            answer.status.token,
            answer.status.expiration_timestamp,
            list(answer.spec.audiences or audiences),
        )

    def wait_until_gone(
        self, ref: ObjectRef, *, timeout: float = 300.0, interval: float = 0.5
    ) -> bool:
        """Namespaces terminate asynchronously: wait until the API no longer has it, asking
        again soon at first (an empty namespace goes in moments), then every `interval`."""
        deadline = time.monotonic() + timeout
        pause = min(0.05, interval)
        while time.monotonic() < deadline:
            if self.get(ref) is None:
                return True
            time.sleep(pause)
            pause = min(pause * 2, interval)
        return False

    def list(
        self, api_version: str, kind: str, *, namespace: str = "", label_selector: str = ""
    ) -> list[dict[str, Any]]:
        resource = self._resource(api_version, kind)

        def list_once() -> list[dict[str, Any]]:
            found = resource.get(
                namespace=namespace or None,
                label_selector=label_selector or None,
                **self._timeout(),
            )
            return [item.to_dict() for item in found.items]

        items, _ = self._retry(list_once)
        return items

    def list_pages(
        self,
        api_version: str,
        kind: str,
        *,
        label_selector: str,
        page_size: int,
    ) -> Iterator[tuple[list[dict[str, Any]], str, bool]]:
        """A LIST over all namespaces in pages of `page_size` (limit / continue, as
        client-go's pager does), so no more than a page is held at once; no retries: a
        watcher has its own backoff. Yields (items, the page's resourceVersion, whether it
        is the last page). Each item's managedFields are dropped as they are read (as
        client-go's informers can): they are most of an object's size and nothing Berth
        compares. A continue token the server compacted away is a KubeError with status
        410: list again."""
        token = ""
        while True:
            query = [("labelSelector", label_selector), ("limit", str(page_size))]
            if token:
                query.append(("continue", token))
            body = self._raw_get(
                api_version, kind, query, read_timeout=self.policy.timeout_seconds
            ).read()
            found = json.loads(body)
            del body
            meta = found.get("metadata") or {}
            token = meta.get("continue") or ""
            items = [without_managed_fields(item) for item in found.get("items") or []]
            del found
            yield items, meta.get("resourceVersion", ""), not token
            if not token:
                return

    def watch(
        self,
        api_version: str,
        kind: str,
        *,
        label_selector: str,
        resource_version: str,
        timeout_seconds: int,
    ) -> Iterator[dict[str, Any]]:
        """The watch events (ADDED, MODIFIED, DELETED, BOOKMARK, ERROR) over all namespaces
        after `resource_version`, as they come, until the server ends the stream after
        `timeout_seconds`. A 410 answered as a status, not an event, is raised as KubeError."""
        response = self._raw_get(
            api_version,
            kind,
            [
                ("watch", "true"),
                ("allowWatchBookmarks", "true"),
                ("labelSelector", label_selector),
                ("resourceVersion", resource_version),
                ("timeoutSeconds", str(timeout_seconds)),
            ],
            read_timeout=timeout_seconds + self.policy.timeout_seconds,
            stream=True,
        )
        try:
            for line in iter_resp_lines(response):
                if line:
                    event = json.loads(line)
                    if isinstance(event.get("object"), dict):
                        without_managed_fields(event["object"])
                    yield event
        finally:
            response.release_conn()

    def _raw_get(
        self,
        api_version: str,
        kind: str,
        query: list[tuple[str, str]],
        *,
        read_timeout: float,
        stream: bool = False,
    ) -> Any:
        path = self._resource(api_version, kind).path()
        method, url, headers, body, post = self.api_client.param_serialize(
            "GET",
            path,
            query_params=query,
            header_params={"Accept": "application/json"},
            auth_settings=["BearerToken"],
        )
        try:
            answer = self.api_client.call_api(
                method,
                url,
                headers,
                body,
                post,
                _request_timeout=(self.policy.timeout_seconds, read_timeout),
            )
        except Exception as exc:
            raise describe(exc, self.api_client.configuration.host) from exc
        response = answer.response
        if not 200 <= response.status <= 299:
            text = response.data.decode(errors="replace")
            response.release_conn()
            message = text
            with contextlib.suppress(ValueError):
                message = json.loads(text).get("message") or text
            raise KubeError(
                message[:500],
                status=response.status,
                transient=response.status >= 500 or response.status == 429,
            )
        return response if stream else answer


def without_managed_fields(obj: dict[str, Any]) -> dict[str, Any]:
    """The object without metadata.managedFields (changed in place): a watcher keeps what
    it compares, and the field managers' bookkeeping is often half of what is listed."""
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        meta.pop("managedFields", None)
    return obj
