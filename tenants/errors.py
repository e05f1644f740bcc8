"""Domain errors: raised by services, turned into messages and status codes at the edges."""

from __future__ import annotations


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
