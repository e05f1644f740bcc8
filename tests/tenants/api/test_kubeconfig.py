""" "Use it": a namespace's kubeconfig, on its page and at
GET /api/v1/namespaces/<name or id>/kubeconfig/, for the people who may see it only.

The kubeconfig reaches the namespace's cluster (server, CA), sets the namespace as the
default, and signs in through the identity provider with kubelogin (or `berth token
--exec`); it holds no secret. The two commands to try say what the person's role gives them,
read off the ClusterRole the tier binds to it.
"""

from __future__ import annotations

import base64
import html
import re
from pathlib import Path

import pytest
import yaml
from django.urls import reverse

from tenants.choices import NamespaceState
from tenants.models import Cluster, EnvironmentTier, Namespace
from tests.support.api import api, assert_problem

ISSUER = "https://sso.example.com/realms/acme"
CLIENT = "kubernetes"
CA = "-----BEGIN CERTIFICATE-----\nMIIBsandbox\n-----END CERTIFICATE-----"
NAME = "payments-shop-dev"


def kubeconfig_url(reference: str | int) -> str:
    return f"/api/v1/namespaces/{reference}/kubeconfig/"


@pytest.fixture
def namespace(api_world, settings):
    settings.KUBE_OIDC_ISSUER_URL = ISSUER
    settings.KUBE_OIDC_CLIENT_ID = CLIENT
    cluster = Cluster.objects.get(name="sandbox")
    cluster.api_url = "https://sandbox.example.com:6443"
    cluster.ca_certificate = CA
    cluster.save()
    return Namespace.objects.create(
        name=NAME,
        tenant=api_world.payments,
        tier=EnvironmentTier.objects.get(slug="dev"),
        cluster=cluster,
        cpu_millis=500,
        memory_mib=512,
        state=NamespaceState.ACTIVE,
    )


def test_a_member_gets_a_kubeconfig_that_signs_in_through_the_provider(
    api_world, namespace, settings
):
    answer = api(api_world.member, scopes=["read"]).get(kubeconfig_url(NAME))

    assert answer.status_code == 200, answer.content
    body = answer.json()
    config = yaml.safe_load(body["kubeconfig"])
    (cluster,) = config["clusters"]
    assert cluster["cluster"]["server"] == "https://sandbox.example.com:6443"
    assert base64.b64decode(cluster["cluster"]["certificate-authority-data"]).decode().strip() == CA
    (context,) = config["contexts"]
    assert config["current-context"] == context["name"]
    assert context["context"]["namespace"] == NAME
    assert context["context"]["cluster"] == cluster["name"]
    (user,) = config["users"]
    assert context["context"]["user"] == user["name"]
    plugin = user["user"]["exec"]
    assert plugin["apiVersion"] == "client.authentication.k8s.io/v1"
    assert [plugin["command"], *plugin["args"]] == [
        "kubectl",
        "oidc-login",
        "get-token",
        f"--oidc-issuer-url={ISSUER}",
        f"--oidc-client-id={CLIENT}",
        "--oidc-extra-scope=groups",
    ]
    # No secret of Berth's, nor any token, is in it.
    assert (
        settings.OIDC_RP_CLIENT_SECRET not in body["kubeconfig"]
        or not settings.OIDC_RP_CLIENT_SECRET
    )
    assert "token" not in str(user["user"]).replace("get-token", "")
    assert body["filename"] == f"{NAME}-kubeconfig.yaml"


def test_the_commands_to_try_say_what_the_persons_role_gives_them(api_world, namespace):
    member = api(api_world.member, scopes=["read"]).get(kubeconfig_url(NAME)).json()
    viewer = api(api_world.viewer, scopes=["read"]).get(kubeconfig_url(NAME)).json()

    assert (member["role"], member["cluster_role"]) == ("member", "berth-tenant-edit")
    commands = [attempt["command"] for attempt in member["try"]]
    assert commands == [f"kubectl get pods -n {NAME}", f"kubectl auth can-i --list -n {NAME}"]
    assert "deploy and change workloads" in member["try"][1]["expect"]
    assert "payments-devs" in member["try"][1]["expect"]
    assert (viewer["role"], viewer["cluster_role"]) == ("viewer", "berth-tenant-view")
    assert "change nothing" in viewer["try"][1]["expect"]


def test_the_namespace_is_named_by_name_or_by_id(api_world, namespace):
    by_id = api(api_world.member, scopes=["read"]).get(kubeconfig_url(namespace.pk))

    assert by_id.status_code == 200
    assert yaml.safe_load(by_id.json()["kubeconfig"])["contexts"][0]["context"]["namespace"] == NAME


def test_berth_token_exec_is_the_plugin_when_the_person_picks_it(api_world, namespace):
    body = (
        api(api_world.member, scopes=["read"])
        .get(kubeconfig_url(NAME), {"credentials": "berth"})
        .json()
    )

    plugin = yaml.safe_load(body["kubeconfig"])["users"][0]["user"]["exec"]
    assert [plugin["command"], *plugin["args"]] == [
        "berth",
        "token",
        "--exec",
        f"--oidc-issuer-url={ISSUER}",
        f"--oidc-client-id={CLIENT}",
    ]


def test_someone_outside_the_tenant_gets_404_by_name_and_by_id(api_world, namespace):
    outsider = api(api_world.outsider, scopes=["read"])

    assert_problem(outsider.get(kubeconfig_url(NAME)), 404, "not-found")
    assert_problem(outsider.get(kubeconfig_url(namespace.pk)), 404, "not-found")
    assert_problem(api(api_world.member).get(kubeconfig_url("payments-nothing-dev")), 404)


def test_an_unknown_sign_in_helper_is_refused_naming_the_parameter(api_world, namespace):
    body = assert_problem(
        api(api_world.member).get(kubeconfig_url(NAME), {"credentials": "x"}),
        400,
        "validation-error",
    )
    assert "credentials" in body["errors"]


def test_without_a_provider_there_is_no_kubeconfig_and_the_answer_says_why(
    api_world, namespace, settings
):
    settings.KUBE_OIDC_ISSUER_URL = ""

    body = assert_problem(api(api_world.member).get(kubeconfig_url(NAME)), 409)
    assert "KUBE_OIDC_ISSUER_URL" in body["detail"]


def test_the_namespace_page_has_a_use_it_section_for_those_who_see_it(api_world, namespace, client):
    client.force_login(api_world.member)
    page = client.get(reverse("namespace-detail", args=[namespace.pk]))

    assert page.status_code == 200
    text = page.content.decode()
    assert "Use it" in text and f"{NAME}-kubeconfig.yaml" in text
    assert f"--oidc-issuer-url={ISSUER}" in text
    assert f"kubectl auth can-i --list -n {NAME}" in text
    picked = client.get(
        reverse("namespace-detail", args=[namespace.pk]), {"credentials": "berth"}
    ).content.decode()
    assert "command: berth" in picked

    client.force_login(api_world.outsider)
    assert client.get(reverse("namespace-detail", args=[namespace.pk])).status_code == 404


def test_the_schema_documents_the_kubeconfig_endpoint(client):
    schema = yaml.safe_load(client.get("/api/schema/").content)

    operation = schema["paths"]["/api/v1/namespaces/{namespace}/kubeconfig/"]["get"]
    assert {p["name"] for p in operation["parameters"]} >= {"namespace", "credentials", "cluster"}


# --- the kubeconfig as a file ------------------------------------------------------------------

YAML = "application/yaml"
DISPOSITION = f"attachment; filename={NAME}-kubeconfig.yaml"
CSS = Path(__file__).resolve().parents[3] / "static" / "berth" / "berth.css"


def download_link(page: str) -> str:
    found = re.search(r'<a class="button" id="kubeconfig-download" href="([^"]+)"', page)
    assert found, "no Download button in the Use it panel"
    return html.unescape(found[1])


def test_the_use_it_panel_downloads_the_kubeconfig_it_shows(api_world, namespace, client):
    client.force_login(api_world.member)
    page = client.get(reverse("namespace-detail", args=[namespace.pk])).content.decode()

    assert f"Download {NAME}-kubeconfig.yaml</a>" in page
    download = client.get(download_link(page))

    assert download.status_code == 200
    assert download["Content-Type"] == YAML
    assert download["Content-Disposition"] == DISPOSITION
    shown = html.unescape(page.split('<pre class="yaml kubeconfig"><code>')[1].split("</code>")[0])
    assert download.content.decode() == shown
    config = yaml.safe_load(download.content)
    assert config["contexts"][0]["context"]["namespace"] == NAME
    assert base64.b64decode(config["clusters"][0]["cluster"]["certificate-authority-data"])


def test_the_download_follows_the_sign_in_helper_picked(api_world, namespace, client):
    client.force_login(api_world.member)
    page = client.get(
        reverse("namespace-detail", args=[namespace.pk]), {"credentials": "berth"}
    ).content.decode()

    config = yaml.safe_load(client.get(download_link(page)).content)
    assert config["users"][0]["user"]["exec"]["args"][:2] == ["token", "--exec"]


def test_only_those_who_see_the_namespace_download_its_kubeconfig(api_world, namespace, client):
    url = reverse("namespace-kubeconfig", args=[namespace.pk])

    anonymous = client.get(url)
    assert anonymous.status_code == 302 and "kubeconfig" not in anonymous.get("Content-Type", "")
    client.force_login(api_world.outsider)
    assert client.get(url).status_code == 404
    client.force_login(api_world.viewer)
    assert client.get(url).status_code == 200  # a viewer sees the page, and the panel


def test_without_a_provider_the_download_goes_back_to_the_panel_saying_why(
    api_world, namespace, client, settings
):
    settings.KUBE_OIDC_ISSUER_URL = ""
    client.force_login(api_world.member)
    page = client.get(reverse("namespace-detail", args=[namespace.pk])).content.decode()
    assert 'id="kubeconfig-download"' not in page  # no button where there is no kubeconfig

    answer = client.get(reverse("namespace-kubeconfig", args=[namespace.pk]), follow=True)
    assert answer.redirect_chain[-1][0].endswith(f"/namespaces/{namespace.pk}/#use-it")
    assert "KUBE_OIDC_ISSUER_URL" in answer.content.decode()


def test_the_kubeconfig_wraps_its_long_lines_instead_of_running_off_the_panel():
    rule = re.search(r"pre\.kubeconfig \{([^}]*)\}", CSS.read_text())
    assert rule and "white-space: pre-wrap" in rule[1] and "overflow-wrap: anywhere" in rule[1]


@pytest.mark.parametrize(
    ("headers", "query"),
    [({"HTTP_ACCEPT": YAML}, {}), ({}, {"format": "yaml"})],
    ids=["accept-header", "format-parameter"],
)
def test_the_api_answers_the_kubeconfig_file_itself_when_asked(
    api_world, namespace, headers, query
):
    client = api(api_world.member, scopes=["read"])
    as_json = client.get(kubeconfig_url(NAME)).json()

    answer = client.get(kubeconfig_url(NAME), query, **headers)

    assert answer.status_code == 200
    assert answer["Content-Type"] == YAML
    assert answer["Content-Disposition"] == DISPOSITION
    assert answer.content.decode() == as_json["kubeconfig"]


def test_the_api_answers_json_by_default_as_before(api_world, namespace):
    client = api(api_world.member, scopes=["read"])

    for headers in ({}, {"HTTP_ACCEPT": "*/*"}, {"HTTP_ACCEPT": "application/json"}):
        answer = client.get(kubeconfig_url(NAME), **headers)
        assert answer["Content-Type"] == "application/json", headers
        assert "Content-Disposition" not in answer
        assert set(answer.json()) >= {"kubeconfig", "filename", "try"}
    assert "Accept" in answer["Vary"]


def test_a_refusal_asked_for_as_yaml_is_still_a_problem(api_world, namespace, settings):
    outsider = api(api_world.outsider, scopes=["read"])
    assert_problem(outsider.get(kubeconfig_url(NAME), HTTP_ACCEPT=YAML), 404, "not-found")

    settings.KUBE_OIDC_ISSUER_URL = ""
    member = api(api_world.member, scopes=["read"])
    body = assert_problem(member.get(kubeconfig_url(NAME), {"format": "yaml"}), 409)
    assert "KUBE_OIDC_ISSUER_URL" in body["detail"]


def test_the_schema_documents_the_kubeconfig_as_a_file_too(client):
    schema = yaml.safe_load(client.get("/api/schema/").content)

    operation = schema["paths"]["/api/v1/namespaces/{namespace}/kubeconfig/"]["get"]
    content = operation["responses"]["200"]["content"]
    assert set(content) == {"application/json", YAML}
    assert content[YAML]["schema"]["type"] == "string"
    assert "format" in {p["name"] for p in operation["parameters"]}
