"""Which GitOps engines read which repository URLs: one rule for the plan preview and the
onboarding form, so a URL an engine cannot read is said before anyone approves, rather
than found when provisioning fails.

Git itself (and so Berth) reads more forms than the engines in a cluster do:

    Flux     its GitRepository's `url` is `^(http|https|ssh)://`; Berth writes git's
             scp-like `user@host:path` as ssh:// for it (provisioning.plan.repository)
    Kargo    its git steps take `http(s)://`, `ssh://` or `user@host:path` (the user is
             required: the Warehouse CRD's repoURL pattern)
    Argo CD  its repo-server, in the cluster, reads over the network: https, http, SSH
             and git:// reach it; a file:// URL is a path on Berth's own machine

Pure: no database, no network.
"""

from __future__ import annotations

from tenants.choices import GitOpsEngine
from tenants.gitrepo import RepositoryInputError, parse_repo_url

ARGOCD, KARGO, FLUX = "Argo CD", "Kargo", "Flux"
READERS = {
    GitOpsEngine.ARGOCD: (ARGOCD,),
    GitOpsEngine.ARGOCD_KARGO: (ARGOCD, KARGO),
    GitOpsEngine.FLUX: (FLUX,),
}


def _why_not(reader: str, scheme: str, scp_like: bool, user: str) -> str | None:
    if scheme in ("https", "http"):
        return None
    if reader == FLUX and scheme != "ssh":
        return "its GitRepository takes http://, https:// and ssh:// URLs only"
    if reader == KARGO and scheme == "ssh" and scp_like and not user:
        return "it takes git@host:path only with the user before @, or an ssh:// URL"
    if reader == KARGO and scheme != "ssh":
        return "its git steps take http://, https://, ssh:// or git@host:path URLs only"
    if reader == ARGOCD and scheme == "file":
        return (
            "its repo-server reads repositories from the cluster over the network, and "
            "a file:// URL is a path on Berth's own machine"
        )
    return None


def unreadable(engine: str, url: str) -> list[str]:
    """One warning line for each of the engine's readers that cannot read `url` (none for
    an empty URL, or one git cannot read either: those are refused where they are typed)."""
    try:
        parsed = parse_repo_url(url.strip(), allow_insecure=True)
    except RepositoryInputError:
        return []
    warnings = []
    for reader in READERS.get(engine, ()):
        why = _why_not(reader, parsed.scheme, parsed.scp_like, parsed.user)
        if why:
            warnings.append(f"{reader} cannot read {parsed.url}: {why}.")
    return warnings
