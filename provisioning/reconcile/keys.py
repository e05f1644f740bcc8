"""The keys of desired state: a namespace on a cluster, a tenant on a cluster (its objects
outside its namespaces: the GitOps engines' projects, Kargo's, Flux's), and a tenant's
repository. Every change of a cluster or a repository is the reconcile of one or more of
them; a key is what the queue holds and what a worker claims. A grant's key is a deadline:
queued for the moment an access grant ends, its reconcile is its namespace's. A sleep key is
a namespace's sleep schedule: it waits for the schedule's next moment (or a wake's end),
has its namespace's key reconciled then, and waits for the next one."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

NAMESPACE, TENANT, REPOSITORY, GRANT, SLEEP = "namespace", "tenant", "repository", "grant", "sleep"
KINDS = (NAMESPACE, TENANT, REPOSITORY, GRANT, SLEEP)


@dataclass(frozen=True, order=True)
class Key:
    kind: str
    cluster: str  # "" for a repository: it serves every cluster of its tenant
    name: str  # the namespace's name, the tenant's slug, or the grant's id

    def __str__(self) -> str:
        where = f"{self.cluster}/{self.name}" if self.cluster else self.name
        return f"{self.kind}:{where}"

    @classmethod
    def parse(cls, text: str) -> Key:
        kind, _, rest = text.partition(":")
        if kind not in KINDS or not rest:
            raise ValueError(f"not a key: {text!r}")
        cluster, _, name = rest.rpartition("/")
        return cls(kind, cluster, name)


def namespace_key(cluster: str, name: str) -> Key:
    return Key(NAMESPACE, cluster, name)


def tenant_key(cluster: str, slug: str) -> Key:
    return Key(TENANT, cluster, slug)


def repository_key(slug: str) -> Key:
    return Key(REPOSITORY, "", slug)


def grant_key(cluster: str, grant_id: int) -> Key:
    return Key(GRANT, cluster, str(grant_id))


def sleep_key(cluster: str, namespace: str) -> Key:
    return Key(SLEEP, cluster, namespace)


def namespace_keys(cluster: str, names: Iterable[str]) -> list[Key]:
    return sorted({namespace_key(cluster, name) for name in names})
