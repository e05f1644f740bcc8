"""Domain errors: raised by services, turned into messages and status codes at the edges."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


class DomainError(Exception):
    """A rule of the domain refused the operation; nothing was changed."""


class IllegalTransition(DomainError):
    def __init__(self, *, request_id: int, state_label: str, action: str) -> None:
        self.request_id = request_id
        self.state_label = state_label
        self.action = action
        super().__init__(
            f"Request #{request_id} is {state_label.lower()}; it cannot be {action} from there."
        )


class NotAllowed(DomainError):
    """The actor lacks the right for this operation (HTTP 403 at the edges)."""


class PlanUnavailable(DomainError):
    """A request's plan cannot be rendered (something it names is gone)."""


class PreviewUnavailable(DomainError):
    """What approval would commit cannot be shown: the tenant's repository could not be read."""


class ClusterUnavailable(DomainError):
    """Berth could not do what was asked on the cluster (unreachable, refused): nothing of it
    was kept."""


class ForgeUnavailable(DomainError):
    """The tenant's forge could not be asked (refused, away, or its settings incomplete)."""


class PlanMoved(DomainError):
    """An approval was bound to a digest that is no longer the request's: its plan or its
    GitOps change moved since the approver saw them (or the plan cannot be rendered any
    more). Nothing was recorded; the approver reviews the current one."""

    def __init__(
        self, *, request_ids: list[int], current_digest: str = "", plan_error: str = ""
    ) -> None:
        self.request_ids = request_ids
        # For one request: the digest approving it now binds to ("" when it has no plan,
        # and `plan_error` says why).
        self.current_digest = current_digest
        self.plan_error = plan_error
        named = ", ".join(f"#{request_id}" for request_id in request_ids)
        super().__init__(
            plan_error or f"The plan or its GitOps change of {named} moved since it was read."
        )


class InvalidInput(DomainError):
    """The input was refused: `field_errors` names each field with its messages, `messages`
    says what is wrong with the input as a whole. Nothing was changed. The API answers it
    with a 400 validation problem; pages put each message on its form field."""

    def __init__(
        self,
        field_errors: Mapping[str, Iterable[str]] | None = None,
        *,
        messages: Iterable[str] = (),
    ) -> None:
        self.field_errors: dict[str, list[str]] = {
            str(field): [str(problem) for problem in problems]
            for field, problems in (field_errors or {}).items()
        }
        self.messages: list[str] = [str(problem) for problem in messages]
        super().__init__(" ".join(self.every_message()))

    @classmethod
    def of(cls, problems: str | Iterable[str] | Mapping[str, str | Iterable[str]]) -> InvalidInput:
        """From one message, a list of them, or field → message(s)."""
        if isinstance(problems, str):
            return cls(messages=[problems])
        if isinstance(problems, Mapping):
            return cls(
                {
                    field: [found] if isinstance(found, str) else found
                    for field, found in problems.items()
                }
            )
        return cls(messages=problems)

    @classmethod
    def from_nested(cls, errors: Mapping[str, Any]) -> InvalidInput:
        """From errors nested as a schema reports them (field → messages, or the errors of
        its parts): each part named by its path, `tiers[1]`, `quota.cpu`."""
        return cls(flatten_errors(errors))

    def every_message(self) -> list[str]:
        return [*self.messages, *(m for found in self.field_errors.values() for m in found)]

    def under(self, field: str) -> InvalidInput:
        """These errors as the errors of one field's parts (`payload` → `payload.app`);
        what was wrong with the whole is then said of that field."""
        nested = {f"{field}.{name}": found for name, found in self.field_errors.items()}
        return InvalidInput({field: self.messages, **nested} if self.messages else nested)


def flatten_errors(detail: Any, prefix: str = "") -> dict[str, list[str]]:
    """Nested error details → {"payload.app": [...], "tiers[1]": [...]}."""
    if isinstance(detail, dict):
        flat: dict[str, list[str]] = {}
        for field, value in detail.items():
            name = f"{prefix}.{field}" if prefix else str(field)
            for key, messages in flatten_errors(value, name).items():
                flat.setdefault(key, []).extend(messages)
        return flat
    if isinstance(detail, list):
        if all(not isinstance(item, dict | list) for item in detail):
            return {prefix or "non_field_errors": [str(item) for item in detail]}
        flat = {}
        for index, item in enumerate(detail):
            for key, messages in flatten_errors(item, f"{prefix}[{index}]").items():
                flat.setdefault(key, []).extend(messages)
        return flat
    return {prefix or "non_field_errors": [str(detail)]}
