"""Signals the domain sends so other apps can react without the domain importing them."""

from django.dispatch import Signal

# Sent after the transaction that changed a request's state commits:
# request_id, action (a key of tenants.services.lifecycle.TRANSITIONS), state.
request_state_changed = Signal()
