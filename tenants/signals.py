"""Signals the domain sends so other apps can react without the domain importing them."""

from django.dispatch import Signal

# Sent after the transaction that changed requests' state commits, once for all the requests
# one transition moved together: request_ids, action (a key of
# tenants.services.lifecycle.TRANSITIONS), state.
request_state_changed = Signal()

# Sent after a cluster is added or its API server changes (on commit): cluster_id. The
# engine claims the namespaces already on it, so none is handed to a tenant.
cluster_registered = Signal()

# The API's rate limiter could not reach its cache and let a request through (fail open).
throttle_cache_failed = Signal()

# An upgrade campaign moved so that the engine has work: action is "roll" (approved,
# resumed) or "roll_back". Sent on commit.
campaign_moved = Signal()

# Berth revoked a deploy token because its right ended (its minter left the tenant or was
# deactivated, its tier changed, its namespace left active): token_id, reason. On commit.
deploy_token_ended = Signal()

# A tenant passed a share of a budget, recorded once for the month: tenant_id, event (the
# webhook's body, tenants.notifications.budget_body). On commit.
budget_threshold_reached = Signal()

# An access grant ended early (revoked): grant_id, actor (a username, "" for Berth). The
# engine removes its binding now rather than at its expiry. On commit.
access_grant_revoked = Signal()

# A namespace's sleep must be settled now rather than at its next scheduled moment: woken on
# demand, its schedule changed, or Ready with one. namespace_id, actor (a username, "" for
# Berth). On commit.
namespace_sleep_changed = Signal()
