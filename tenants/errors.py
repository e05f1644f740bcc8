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
