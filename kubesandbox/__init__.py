"""A Kubernetes API server stand-in, served over real HTTP for kubectl and the official client.

No real kube-apiserver can run where Berth is developed and tested, so this package serves
the slice of the Kubernetes 1.32 REST API a tenant and Berth use, refusing what a real API
server refuses, so that kubectl, the official ``kubernetes`` Python client (typed APIs,
``CustomObjectsApi``, ``DynamicClient``) and Berth work against it unchanged. It uses only
the standard library, PyYAML, jsonschema, cel-python and the Kubernetes schemas shipped by
``kubernetes-validate``; it never imports Django.

What it honours:

* Discovery (``/api``, ``/apis``, group and group-version lists) for core, apps, batch,
  networking, RBAC, policy, scheduling, autoscaling, coordination, admissionregistration,
  apiextensions and the authentication/authorization review APIs, plus whatever the
  installed CRDs define; ``/openapi/v2`` (JSON, or gnostic protobuf: ``openapiv2``) and
  ``/openapi/v3`` with per group-version documents built from the 1.32 definitions
  (``openapi``), so ``kubectl apply`` (server-side field validation) and ``kubectl
  explain`` (v3, and v2 with ``--output=plaintext-openapiv2``) work; ``/version``,
  ``/healthz``, ``/livez``, ``/readyz``.
* Request bodies in JSON, YAML and, for the kinds kubectl's typed commands send, protobuf
  (``protobuf``); anything else is 415. Answers are JSON.
* CRUD with apiserver semantics (``store``): 409 AlreadyExists/Conflict (stale
  ``resourceVersion``), ``generateName``, ``dryRun``, DELETE answers, deletecollection,
  merge/strategic (as merge)/JSON patch, server-side apply with ``managedFields``, the
  ``/status`` subresource, namespaces that terminate and take their content with them.
* Validation (``validation``): types and required fields from the schemas (400 for what
  would not decode, 422 Invalid with causes for the rest), unknown fields per
  ``fieldValidation`` (Strict: 400 ``strict decoding error``; Warn, the server default: a
  ``Warning`` header; Ignore: dropped), quantities, names per kind, labels, RBAC ``roleRef``
  (required, immutable), some immutable fields; the protected namespaces (``default``,
  ``kube-system``, ``kube-public``, ``kube-node-lease``) cannot be deleted (403).
* CustomResourceDefinitions (``crds``): served when stored, with pruning, defaulting and
  validation against their structural ``openAPIV3Schema`` and its CEL rules (``celrules``).
* Authentication (``authn``: admin token, static token file, ServiceAccount tokens from
  TokenRequest), impersonation headers, RBAC authorization of every request (``rbac``:
  bootstrap ClusterRoles and bindings, aggregation, escalation prevention), the access
  review APIs and SelfSubjectReview (``reviews``).
* ValidatingAdmissionPolicy and its bindings, in CEL (``admission``).
* Watch (``watch``): JSON event streams with ADDED/MODIFIED/DELETED/BOOKMARK, resourceVersion
  semantics (410 Gone past the kept history), ``timeoutSeconds``, label and field selectors.
* HTTPS on request (``tls``: a CA and certificate made at start, the CA in the kubeconfig).
* A JSON state file so a developer sandbox survives restarts, and test hooks under
  ``/_sandbox/`` (also on ``KubeSandbox``): fault and delay injection, a request log, reset.

What it does not do: controllers (nothing reconciles a Deployment, an Argo Application or a
Kargo Project; no scheduler, no pods run; no ``default`` ServiceAccount in new namespaces;
finalizers are stored but deletes are immediate; no garbage collection by ownerReferences),
mutating admission and webhooks (their configurations are stored, never called), CRD
conversion webhooks, strategic-merge list semantics, protobuf or CBOR answers (but for
``/openapi/v2``), quota admission (a quota's status is counted when read: ``quota``),
client certificates (HTTPS is opt-in: ``tls=True``), built-in defaulting (a Deployment's
``replicas`` is not filled in), most of the hand-written Go validation of built-in kinds.
"""

from .authn import ADMIN, ANONYMOUS, UserInfo
from .server import ANONYMOUS_IS_ADMIN, Fault, KubeSandbox
from .store import DEFAULT_NAMESPACES, Store

__all__ = [
    "ADMIN",
    "ANONYMOUS",
    "ANONYMOUS_IS_ADMIN",
    "DEFAULT_NAMESPACES",
    "Fault",
    "KubeSandbox",
    "Store",
    "UserInfo",
]
