"""The benches' baselines: the official Kubernetes client, signed in as Berth, applying the
objects Berth applied, with nothing of Berth around it. Not a bench itself.

`raw_apply`: one server-side apply after another, as the simplest script would.
`parallel_raw_apply`: the same objects with the parallelism Berth's workers have (processes
× apply threads), each namespace's objects wave by wave as Berth orders them (the Namespace
first, RoleBindings after the Roles they grant): what is left between Berth and it is
Berth's own overhead, not a difference in parallelism.
"""

from __future__ import annotations

import multiprocessing
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path
from typing import Any


def _dynamic_client(url: str, token: str, ca_certificate: str):
    from kubernetes import client
    from kubernetes.dynamic import DynamicClient

    configuration = client.Configuration(host=url)
    configuration.api_key = {"BearerToken": token}
    configuration.api_key_prefix = {"BearerToken": "Bearer"}
    ca_file = Path(tempfile.mkstemp(suffix=".pem")[1])
    ca_file.write_text(ca_certificate)
    configuration.ssl_ca_cert = str(ca_file)
    configuration.connection_pool_maxsize = 32
    return DynamicClient(client.ApiClient(configuration))


def _apply(dynamic, obj: dict[str, Any]) -> None:
    resource = dynamic.resources.get(api_version=obj["apiVersion"], kind=obj["kind"])
    resource.server_side_apply(
        body=obj,
        namespace=obj["metadata"].get("namespace"),
        field_manager="raw",
        force_conflicts=True,
    )


def raw_apply(objects: list[dict], sandbox) -> tuple[float, float]:
    """One apply after another into the cluster as it is (reset it first). Returns its wall
    time and its own CPU time."""
    dynamic = _dynamic_client(sandbox.url, sandbox.token, sandbox.ca_certificate)
    started, cpu_started = time.perf_counter(), time.process_time()
    for obj in objects:
        _apply(dynamic, obj)
    return time.perf_counter() - started, time.process_time() - cpu_started


def _share(
    url: str, token: str, ca_certificate: str, waves: list[list[dict]], threads: int
) -> tuple[float, float]:
    """One process's share: its client made and its discovery read before its clock starts
    (Berth's workers have theirs warm), then wave after wave, `threads` applies at a time."""
    dynamic = _dynamic_client(url, token, ca_certificate)
    for kind in {(obj["apiVersion"], obj["kind"]) for wave in waves for obj in wave}:
        dynamic.resources.get(api_version=kind[0], kind=kind[1])
    started = time.time()
    with ThreadPoolExecutor(max_workers=threads) as pool:
        for wave in waves:
            list(pool.map(lambda obj: _apply(dynamic, obj), wave))
    return started, time.time()


def parallel_raw_apply(objects: list[dict], sandbox, *, processes: int, threads: int) -> float:
    """The objects shared out by namespace among `processes` processes of `threads` apply
    threads each; the wall time from the first process's start to the last one's end."""
    from provisioning.reconcile.applying import wave_of

    by_namespace: dict[str, list[dict]] = {}
    for obj in objects:
        meta = obj["metadata"]
        where = meta.get("namespace") or (meta["name"] if obj["kind"] == "Namespace" else "")
        by_namespace.setdefault(where, []).append(obj)
    shares: list[list[dict]] = [[] for _ in range(processes)]
    for index, group in enumerate(by_namespace.values()):
        shares[index % processes].extend(group)
    waved = []
    for share in shares:
        ranks: dict[int, list[dict]] = {}
        for obj in share:
            ranks.setdefault(wave_of(obj), []).append(obj)
        waved.append([ranks[rank] for rank in sorted(ranks)])
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=processes, mp_context=context) as pool:
        spans = list(
            pool.map(
                _share,
                *zip(
                    *[
                        (sandbox.url, sandbox.token, sandbox.ca_certificate, waves, threads)
                        for waves in waved
                    ],
                    strict=True,
                ),
            )
        )
    return max(end for _, end in spans) - min(start for start, _ in spans)
