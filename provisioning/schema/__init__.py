"""Schema validation of the Kubernetes objects Berth renders, before anything is applied.

Berth renders objects as plain dicts (``apiVersion``, ``kind``, ``metadata``, ``spec``...).
:func:`validate_object` checks one such dict against the schema of its kind and returns a list of
:class:`SchemaError` (empty when valid); :func:`validate_objects` does the same for a batch.
Nothing here talks to a cluster or the network itself: the target cluster's schemas come
through a :class:`ServedSchemas` whose ``fetch`` the caller gives (``provisioning.validation``
gives the cluster client's).

Where the schemas come from
---------------------------
* **Built-in Kubernetes kinds** (Namespace, ResourceQuota, LimitRange, NetworkPolicy, RBAC,
  Deployment, Service, ConfigMap, Ingress, ValidatingAdmissionPolicy[Binding]... any kind the
  official ``kubernetes`` Python client can *create*): the client's generated models are the API
  schema. ``(apiVersion, kind)`` is mapped to a model class through the client's API classes: the
  group/version selects the module (``networking.k8s.io/v1`` -> ``networking_v1_api``, confirmed by
  the ``/apis/<group>/<version>/`` paths in that module) and the ``body`` annotation of its
  ``create_[namespaced_]<kind>`` method names the model (``V1NetworkPolicy``). A model's
  ``attribute_map`` gives the JSON field names, ``openapi_types`` their types (``str``, ``int``,
  ``bool``, ``float``, ``datetime``, ``bytes``, ``object``, ``List[...]``, ``Dict[str, ...]``,
  other models), and -- the 37.x client generates pydantic v2 models -- ``model_fields[...]
  .is_required()`` which fields are required. ``object`` is refined from the pydantic annotation:
  ``int | str`` is an IntOrString (integer or string), ``Dict[str, Any]`` must be a JSON object,
  anything else is free-form.
* **Custom resources** (Argo CD, Kargo, Flux): as kubectl does, the schema the target
  cluster itself serves at ``/openapi/v3/apis/<group>/<version>`` (built by its API server
  from the CRDs it has; ``served``, see ``served.py``: fetched once per cluster and
  group-version, kept for a few minutes). Where there is no cluster to ask (a plan-only
  cluster, offline checks) or it serves no such group-version, the upstream CRD YAMLs in a
  directory (the ``crd_dir`` argument, else ``$BERTH_CRD_DIR``; nothing else is looked
  for: without either, a custom kind raises, see below). The ``openAPIV3Schema`` of the
  served version named by the object's apiVersion is checked with ``jsonschema`` (Draft 4
  semantics, which OpenAPI v3.0 schemas follow), after this translation of the
  structural-schema dialect:

  - objects with ``type: object`` and no ``additionalProperties`` and no
    ``x-kubernetes-preserve-unknown-fields: true`` get ``additionalProperties: false``: the API
    server would silently prune unknown fields, here they are *refused*;
  - ``x-kubernetes-preserve-unknown-fields: true`` leaves the node open;
  - ``x-kubernetes-int-or-string: true`` without ``anyOf`` becomes ``type: [integer, string]``;
  - ``nullable: true`` adds ``null`` to the node's type/enum;
  - ``x-kubernetes-embedded-resource: true`` implicitly allows ``apiVersion``/``kind``/``metadata``;
  - a ``required`` property that has a ``default`` is not required (the server defaults it
    before validating);
  - ``pattern`` is matched with ASCII semantics (Go's RE2 ``\\w``/``\\d`` are ASCII-only);
  - ``format`` ``int32``/``int64`` (range), ``date-time`` (RFC 3339) and ``byte`` (base64) are
    checked; other formats are ignored, as the API server ignores unknown ones.

  CRD schemas leave ``metadata`` open, so metadata is checked against the built-in ``ObjectMeta``
  model instead (unknown fields, labels/annotations must map strings to strings, ...).

For every kind, ``metadata.name`` is required (objects are applied by name, ``generateName``
does not apply), ``metadata.namespace`` is refused on cluster-scoped kinds, and ``null`` values
are refused unless the schema says ``nullable`` or the field is free-form (omit a field instead
of setting it to ``None``). An unknown ``(apiVersion, kind)`` is an error, never a pass.

What it cannot check
--------------------
* Defaulting and mutation (server defaults, admission webhooks, mutating policies): the dict is
  validated as written. Only "required but defaulted" is understood, see above.
* Go-side validation of built-in kinds (name/label syntax, port ranges, quantity syntax, enum
  values, cross-field rules): the client models carry types and required fields only.
  Quantities are only checked to be strings.
* CEL rules in CRDs (``x-kubernetes-validations``) are **not evaluated**; nor are validating
  webhooks of Argo CD / Kargo / Flux, ``x-kubernetes-list-type``/``-map-keys`` uniqueness,
  or references between objects (a Stage's Warehouse existing, a RoleBinding's Role...).

If a custom kind is to be validated but no CRD directory is configured or it does not exist,
or the client models are not the pydantic kind this module understands,
:class:`SchemaUnavailable` is raised rather than letting the object pass.

    validate  the entry points
    builtin   built-in kinds, from the client's models
    crds      custom resources, from the CRDs
    served    custom resources, from the schemas a cluster serves
    common    what both share
"""

from provisioning.schema.common import CRD_DIR_ENV, SchemaError, SchemaUnavailable
from provisioning.schema.served import ServedSchemas
from provisioning.schema.validate import crd_directory, validate_object, validate_objects

__all__ = [
    "CRD_DIR_ENV",
    "SchemaError",
    "SchemaUnavailable",
    "ServedSchemas",
    "crd_directory",
    "validate_object",
    "validate_objects",
]
