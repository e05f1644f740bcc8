"""The development sandbox cluster `make run` starts: the local Kubernetes API stand-in
(`python -m kubesandbox`, started as a process: Berth never imports it), set up as a
platform team would set up a cluster for Berth:

- over HTTPS (its CA is trusted by the demo cluster's record), so `kubectl` works with the
  admin kubeconfig it writes (`data/sandbox/kubeconfig`);
- with the CRDs Berth writes objects of: the upstream Argo CD, Kargo and Flux CRDs from
  `BERTH_CRD_DIR`, else from `../shared/crds` where Berth's own checkouts keep them (this
  development tool may look there; Berth itself never does), else stand-ins for the same
  kinds that accept any spec; `make run` says which, and hands the upstream ones to Berth as
  its `BERTH_CRD_DIR`;
- with Berth's ServiceAccount holding exactly the RBAC the Helm chart ships
  (`deploy/helm/check_chart.py --berth-rbac`), and a token for it that Berth signs in with;
- trusting the development identity provider's ID tokens, as a cluster's kube-apiserver
  trusts the organisation's (`--oidc-*`): people reach their namespaces with kubectl as
  themselves, their groups bound by the tenants' RoleBindings.

Beside it, the forge stand-in (`python -m forgesandbox`, a process too: `forge_command`)
answers GitHub's API over the demo's repositories, so the payments tenant's prod changes
open pull requests there (merge-request mode), which a person reviews, merges or closes on
the forge's pages (`forge_page`); `seed_demo_forge` points its webhook at Berth.

Kept free of Django so the `run` launcher can use it before settings exist.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

BASE_DIR = Path(__file__).resolve().parent.parent
# What a platform team has installed on a cluster before tenants arrive.
PLATFORM_NAMESPACES = ("argocd", "kargo", "flux-system", "ingress-nginx", "berth-system")
SERVICE_ACCOUNT = "berth"
# The kinds Berth applies or writes into tenants' repositories, when the upstream CRDs are
# not here: (group, version, kind, plural, namespaced).
CRD_STANDINS = (
    ("argoproj.io", "v1alpha1", "Application", "applications", True),
    ("argoproj.io", "v1alpha1", "ApplicationSet", "applicationsets", True),
    ("argoproj.io", "v1alpha1", "AppProject", "appprojects", True),
    ("kargo.akuity.io", "v1alpha1", "Project", "projects", False),
    ("kargo.akuity.io", "v1alpha1", "ProjectConfig", "projectconfigs", True),
    ("kargo.akuity.io", "v1alpha1", "Warehouse", "warehouses", True),
    ("kargo.akuity.io", "v1alpha1", "Stage", "stages", True),
    ("kargo.akuity.io", "v1alpha1", "Freight", "freights", True),
    ("kargo.akuity.io", "v1alpha1", "Promotion", "promotions", True),
    ("kustomize.toolkit.fluxcd.io", "v1", "Kustomization", "kustomizations", True),
    ("source.toolkit.fluxcd.io", "v1", "GitRepository", "gitrepositories", True),
    ("source.toolkit.fluxcd.io", "v1", "OCIRepository", "ocirepositories", True),
    ("source.toolkit.fluxcd.io", "v1", "HelmRepository", "helmrepositories", True),
    ("helm.toolkit.fluxcd.io", "v2", "HelmRelease", "helmreleases", True),
)


def upstream_crd_dir() -> Path | None:
    configured = os.environ.get("BERTH_CRD_DIR")
    candidate = Path(configured) if configured else BASE_DIR.parent / "shared" / "crds"
    return candidate.resolve() if candidate.is_dir() else None


def crds_said(prepared: dict[str, object]) -> str:
    """The line `make run` prints about the CRDs its sandbox got."""
    if prepared["upstream_crds"]:
        return f"CRDs: upstream from {prepared['crds']}"
    return "CRDs: Berth's stand-ins (set BERTH_CRD_DIR for the upstream ones)"


def crd_standins() -> list[dict]:
    """CustomResourceDefinitions for CRD_STANDINS whose schema accepts any spec."""
    return [
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{group}"},
            "spec": {
                "group": group,
                "names": {
                    "kind": kind,
                    "plural": plural,
                    "singular": kind.lower(),
                    "listKind": f"{kind}List",
                },
                "scope": "Namespaced" if namespaced else "Cluster",
                "versions": [
                    {
                        "name": version,
                        "served": True,
                        "storage": True,
                        "subresources": {"status": {}},
                        "schema": {
                            "openAPIV3Schema": {
                                "type": "object",
                                "x-kubernetes-preserve-unknown-fields": True,
                            }
                        },
                    }
                ],
            },
        }
        for group, version, kind, plural, namespaced in CRD_STANDINS
    ]


def prepare(*, data_dir: Path, berth_namespace: str, berth_token: str) -> dict[str, object]:
    """Write what the sandbox starts with under `data_dir/sandbox/`: Berth's RBAC from the
    chart, the static token Berth signs in with, the CRDs. Returns the command's paths and
    whether the CRDs are the upstream ones."""
    folder = data_dir / "sandbox"
    folder.mkdir(parents=True, exist_ok=True)
    rbac = folder / "berth-rbac.yaml"
    subprocess.run(  # noqa: S603 - the chart's own renderer, with our arguments
        [
            sys.executable,
            str(BASE_DIR / "deploy/helm/check_chart.py"),
            "--berth-rbac",
            str(rbac),
            "--namespace",
            berth_namespace,
        ],
        check=True,
        cwd=BASE_DIR,
    )
    tokens = folder / "tokens.csv"
    user = f"system:serviceaccount:{berth_namespace}:{SERVICE_ACCOUNT}"
    groups = f"system:serviceaccounts,system:serviceaccounts:{berth_namespace}"
    tokens.write_text(f'{berth_token},{user},{SERVICE_ACCOUNT},"{groups}"\n')
    tokens.chmod(0o600)
    upstream = upstream_crd_dir()
    if upstream is None:
        crds = folder / "crd-standins.yaml"
        crds.write_text(yaml.safe_dump_all(crd_standins()))
    else:
        crds = upstream
    return {
        "rbac": rbac,
        "tokens": tokens,
        "crds": crds,
        "upstream_crds": upstream is not None,
        "kubeconfig": folder / "kubeconfig",
        "state": folder / "cluster.json",
    }


# The user names the stand-in gives people signing in with an ID token: oidc:<sub>.
OIDC_USERNAME_PREFIX = "oidc:"


def oidc_options(*, issuer: str, client_id: str) -> list[str]:
    """kube-apiserver's flags for trusting `issuer`'s ID tokens for `client_id`: the user is
    the `sub` (prefixed), the groups are the `groups` claim as the tenants name them."""
    if not (issuer and client_id):
        return []
    return [
        f"--oidc-issuer-url={issuer}",
        f"--oidc-client-id={client_id}",
        "--oidc-username-claim=sub",
        f"--oidc-username-prefix={OIDC_USERNAME_PREFIX}",
        "--oidc-groups-claim=groups",
    ]


def sandbox_command(
    *, port: str, prepared: dict[str, object], oidc_issuer: str = "", oidc_client_id: str = ""
) -> list[str]:
    return [
        sys.executable,
        "-m",
        "kubesandbox",
        "--port",
        port,
        "--tls",
        "--state-file",
        str(prepared["state"]),
        "--kubeconfig",
        str(prepared["kubeconfig"]),
        "--token-file",
        str(prepared["tokens"]),
        "--crd",
        str(prepared["crds"]),
        "--manifest",
        str(prepared["rbac"]),
        # Deleted namespaces linger briefly, as on a real cluster.
        "--termination-seconds",
        "1",
        *(f"--namespace={name}" for name in PLATFORM_NAMESPACES),
        *oidc_options(issuer=oidc_issuer, client_id=oidc_client_id),
    ]


def ca_certificate(kubeconfig: Path) -> str:
    """The CA the sandbox's serving certificate is signed by, as PEM (from its kubeconfig)."""
    import base64

    config = yaml.safe_load(kubeconfig.read_text())
    data = config["clusters"][0]["cluster"]["certificate-authority-data"]
    return base64.b64decode(data).decode()


def forge_page(api_url: str, page: str) -> str:
    """A page of payments' repository on the forge stand-in, for a person in a browser
    (``pulls``, ``pull/<number>``): beside its API root, as GitHub's web UI is."""
    return f"{api_url.removesuffix('/api/v3')}/demo/payments/{page}"


def forge_command(env: dict[str, str], root: Path, port: int) -> list[str]:
    """The forge stand-in (GitHub's API) over the demo's repositories on `port`, started and
    not waited for: `prepare_demo` waits for it to listen, and goes on without it (the demo
    then pushes directly) if it does not. Its API root is `forge_api_url(port)`."""
    return [
        sys.executable,
        "-m",
        "forgesandbox",
        f"--root={root}",
        f"--git-url={env['BERTH_DEMO_GIT_URL']}",
        f"--port={port}",
        f"--token={env['BERTH_DEMO_FORGE_TOKEN']}",
        "--repo=demo/payments",
        "--no-validate",
    ]


def forge_api_url(port: int) -> str:
    return f"http://127.0.0.1:{port}/api/v3"
