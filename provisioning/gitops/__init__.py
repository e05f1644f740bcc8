"""Writing tenants' GitOps repositories with the git command line. I/O and nothing else.

`write(remote, propose)` makes one commit on the remote branch, or none when nothing
changes. Under a per-repository lock it fetches the branch, resets a working copy to it,
asks `propose(checkout)` what the files should be (the caller renders them purely, from
`provisioning.gitops_plan`), commits and pushes. If the push is refused because the branch
moved (someone outside Berth pushed), it resets to the new remote state and asks again: the
file set is recomputed, never merged, so nothing is lost and nothing conflicts.

The lock works across worker processes: a PostgreSQL advisory lock when the database is
PostgreSQL (every worker on every host shares it; a dead worker's lock goes with its
session), else an flock(2) on a file in the data directory (SQLite means a single host).

Transient failures (the remote unreachable, timeouts, the lock not free in time) are
retried with exponential backoff and jitter (`BERTH_GIT_MAX_ATTEMPTS`,
`BERTH_GIT_BACKOFF_SECONDS`); anything else (authentication, a missing repository, a hook
refusing the push) fails at once with git's own message.

Credentials never appear in a command line, a URL, a log line or an error message: an
HTTPS token travels as an `http.<url>.extraHeader` passed in the environment
(GIT_CONFIG_COUNT/KEY/VALUE), an SSH deploy key is a 0600 file in a private temporary
directory (`GIT_SSH_COMMAND=ssh -i ...`) removed afterwards, and git's output is redacted
before anyone reads it.

    remote    the repository, its URL and credentials, settings, GitError
    session   running git with the credentials
    locks     the per-repository lock
    checkout  a working copy: read, commit, push, find a request's commit
    write     one commit, retried when the branch moved
    write_batch  one commit each for several callers, pushed together
"""

from provisioning.gitops.checkout import Checkout
from provisioning.gitops.remote import (
    GitError,
    Remote,
    display_url,
    policy_from_settings,
    private_key,
    redact,
    token_pair,
    transport,
)
from provisioning.gitops.session import interactive, session
from provisioning.gitops.snapshots import read_snapshot_if_moved
from provisioning.gitops.write import (
    Proposal,
    Proposer,
    Skip,
    WriteResult,
    one_fetch_per_branch,
    probe,
    probe_write,
    read_files,
    read_snapshot,
    write,
    write_batch,
    write_branch,
)

__all__ = [
    "Checkout",
    "GitError",
    "Proposal",
    "Proposer",
    "Remote",
    "Skip",
    "WriteResult",
    "display_url",
    "interactive",
    "policy_from_settings",
    "private_key",
    "probe",
    "probe_write",
    "private_key",
    "one_fetch_per_branch",
    "read_files",
    "read_snapshot",
    "read_snapshot_if_moved",
    "redact",
    "session",
    "token_pair",
    "transport",
    "write",
    "write_batch",
    "write_branch",
]
