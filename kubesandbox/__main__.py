"""``python -m kubesandbox``: run the Kubernetes stand-in until SIGTERM/SIGINT.

The first line on stdout is ``listening on <url>`` so a parent process can read the port.
Requests need a bearer token: the admin's (``--token``, else one is generated and written
to ``--kubeconfig``), a static one (``--token-file``) or a ServiceAccount's. Without one a
request is ``system:anonymous``, unless ``--anonymous-user`` says otherwise. With
``--oidc-issuer-url`` and ``--oidc-client-id`` it also accepts that provider's ID tokens, as
kube-apiserver does with the same flags.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import threading
from pathlib import Path

from .authn import OidcOptions
from .server import KubeSandbox
from .store import DEFAULT_NAMESPACES


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m kubesandbox", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--state-file", type=Path, help="persist objects here across restarts")
    parser.add_argument("--token", help="the admin's bearer token (default: a random one)")
    parser.add_argument(
        "--token-file",
        type=Path,
        help="static tokens, one 'token,user,uid,\"group1,group2\"' per line "
        "(kube-apiserver's --token-auth-file format)",
    )
    parser.add_argument(
        "--anonymous-user",
        help="who a request without credentials is: 'admin' for the admin, or a user name "
        "(default: system:anonymous, as a real API server)",
    )
    parser.add_argument(
        "--termination-seconds",
        type=float,
        default=0.0,
        help="how long a deleted namespace stays Terminating",
    )
    parser.add_argument(
        "--kubeconfig", type=Path, help="write a kubeconfig with the admin's token here"
    )
    parser.add_argument(
        "--namespace",
        action="append",
        default=[],
        help="a namespace that exists from the start (repeatable), like a platform component's",
    )
    parser.add_argument(
        "--crd",
        action="append",
        default=[],
        type=Path,
        help="a CRD YAML file, or a directory of them, installed at start (repeatable)",
    )
    parser.add_argument(
        "--manifest",
        action="append",
        default=[],
        type=Path,
        help="a YAML file (or directory) of objects applied as the admin at start (repeatable)",
    )
    parser.add_argument(
        "--tls",
        action="store_true",
        help="serve HTTPS with a certificate made at start (its CA goes into --kubeconfig); "
        "kubectl sends a kubeconfig's token over HTTPS only",
    )
    oidc = parser.add_argument_group(
        "OpenID Connect", "ID tokens of one provider, as kube-apiserver's --oidc-* flags"
    )
    oidc.add_argument(
        "--oidc-issuer-url",
        help="the provider's issuer (https://…); its "
        "discovery document names the JWKS that signs ID tokens",
    )
    oidc.add_argument("--oidc-client-id", help="the audience ID tokens must carry")
    oidc.add_argument(
        "--oidc-username-claim", default="sub", help="the claim that names the user (default: sub)"
    )
    oidc.add_argument(
        "--oidc-username-prefix",
        help="put before every user name; '-' for "
        "none (default: none for email, '<issuer>#' for any other claim)",
    )
    oidc.add_argument(
        "--oidc-groups-claim",
        default="",
        help="the claim that lists the user's groups (default: none)",
    )
    oidc.add_argument("--oidc-groups-prefix", default="", help="put before every group")
    parser.add_argument("--verbose", action="store_true", help="log requests to stderr")
    args = parser.parse_args(argv)
    if bool(args.oidc_issuer_url) != bool(args.oidc_client_id):
        parser.error("--oidc-issuer-url and --oidc-client-id go together")

    sandbox = KubeSandbox(
        args.host,
        args.port,
        token=args.token,
        token_file=args.token_file,
        anonymous_user=args.anonymous_user,
        state_file=args.state_file,
        termination_seconds=args.termination_seconds,
        namespaces=(*DEFAULT_NAMESPACES, *args.namespace),
        crds=args.crd,
        manifests=args.manifest,
        tls=args.tls,
        verbose=args.verbose,
        oidc=OidcOptions(
            issuer_url=args.oidc_issuer_url,
            client_id=args.oidc_client_id,
            username_claim=args.oidc_username_claim,
            username_prefix=args.oidc_username_prefix,
            groups_claim=args.oidc_groups_claim,
            groups_prefix=args.oidc_groups_prefix,
        )
        if args.oidc_issuer_url
        else None,
    )
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    sandbox.start()
    try:
        if args.kubeconfig:
            # The kubeconfig holds the admin's credential: readable by its owner only.
            fd = os.open(args.kubeconfig, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as out:
                out.write(json.dumps(sandbox.kubeconfig(), indent=2))
        print(f"listening on {sandbox.url}", flush=True)
        stop.wait()
    finally:
        sandbox.stop()


if __name__ == "__main__":
    main()
