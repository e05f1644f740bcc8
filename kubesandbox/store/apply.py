"""Server-side apply (``application/apply-patch+yaml``): field ownership, conflicts between
managers, and pruning of the fields a manager stops applying."""

from __future__ import annotations

from .. import fields
from ..errors import ApiError, not_found
from ..objects import WriteContext, object_key, prepare
from ..patching import merge_patch
from ..resources import ResourceType
from ..validation import decode, validate
from .state import StoreState


class ServerSideApply:
    """Mixed into ``Store``: uses its lock-held internals."""

    def _apply(
        self: StoreState,
        rt: ResourceType,
        namespace: str | None,
        name: str,
        config: object,
        manager: str | None,
        force: bool,
        subresource: str,
        dry_run: bool,
        ctx: WriteContext,
    ) -> tuple[dict, bool]:
        """Server-side apply: create, or merge ``config`` and prune fields it no longer sets."""
        if not manager:
            raise ApiError(
                422,
                'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is '
                "required for apply patch",
            )
        config = prepare(rt, namespace, config, url_name=name)
        ctx.warnings += decode(rt, config, ctx.field_validation)
        if subresource or rt.has_status:
            # Main endpoint: status is not the caller's; status endpoint: only status is.
            status = config.pop("status", None)
            if subresource and status is not None:
                config["status"] = status
        own: fields.OwnerKey = (manager, "Apply", subresource)
        applied = fields.leaf_paths(config)
        key = object_key(rt, namespace, name)
        if key not in self._objects:
            if subresource:
                raise not_found(rt, name)
            obj = merge_patch({}, config)
            validate(rt, obj)
            self._check_can_create(rt, namespace, name)
            return self._create(rt, obj, {own: applied}, dry_run, ctx), True
        existing = self._existing(rt, namespace, name)
        self._check_precondition(rt, existing, config)
        owners = fields.owners_of(existing)
        conflicts = fields.apply_conflicts(owners, own, applied, existing, config)
        if conflicts and not force:
            raise ApiError(
                409,
                f"Apply failed with {len(conflicts)} conflict(s): "
                + "; ".join(f'conflict with "{k[0]}": {fields.dotted(p)}' for k, p in conflicts),
                details={
                    "name": name,
                    "kind": rt.plural,
                    "causes": [
                        {
                            "reason": "FieldManagerConflict",
                            "message": f'conflict with "{k[0]}"',
                            "field": fields.dotted(p),
                        }
                        for k, p in conflicts
                    ],
                },
            )
        for owner_key, path in conflicts:  # force: the applier takes these fields over
            owners[owner_key].discard(path)
        merged = merge_patch(existing, config)
        others = set().union(*(paths for k, paths in owners.items() if k != own))
        for path in owners.get(own, set()) - applied - others:
            fields.remove(merged, path)
        owners[own] = applied
        return self._update(rt, existing, merged, own, dry_run, owners, ctx), False
