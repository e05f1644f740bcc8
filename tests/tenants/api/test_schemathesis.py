"""Property-based tests of the live API against its own OpenAPI schema (schemathesis).

For every operation of /api/schema/, schemathesis sends generated requests, valid and
invalid, to a live server as a platform admin with every scope, and checks that none is
answered with a server error, that every answer matches the schema (body, status code,
content type, headers), and that every request the schema calls invalid is refused
(`negative_data_rejection`). Bounded: MAX_EXAMPLES examples per operation and
mode, derandomized, so the run is repeatable and takes about a minute.

(schemathesis' own pytest integration, `from_fixture`, relies on a pytest internal that
pytest 9 no longer has, so the operations are run from one test with Hypothesis directly.)
"""

from __future__ import annotations

import uuid
from types import SimpleNamespace

import hypothesis
import pytest
import schemathesis
import yaml
from django.core.management import call_command
from django.utils import timezone
from hypothesis import HealthCheck, Phase, configuration, given, settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.core.deserialization import deserialize_yaml
from schemathesis.core.media_types import YAML_MEDIA_TYPES
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tenants import demo, services
from tenants.choices import NamespaceState
from tenants.models import (
    AuditEvent,
    Cluster,
    DeployToken,
    EnvironmentTier,
    EphemeralEnvironment,
    Namespace,
    Project,
    Tenant,
    User,
)
from tests.support.api import submit
from tests.support.workflow import approve_if_needed, ask_for_environment

MAX_EXAMPLES = 20


@schemathesis.deserializer(*YAML_MEDIA_TYPES)
def yaml_documents(context, response):
    """YAML as its schema describes it: Backstage's catalog is a stream of documents (the
    schema: the array of them); any other YAML answer (a kubeconfig) is one document."""
    text = response.content.decode(response.encoding or "utf-8")
    if context.operation.path.startswith("/api/v1/backstage/"):
        return list(yaml.safe_load_all(text))
    return deserialize_yaml(text)


# Every conformance check but positive_data_acceptance: Berth refuses schema-valid requests
# whose meaning is wrong (a name already taken, an environment not live yet, a rule that
# does not parse, a TTL under a minute), with a 400 problem naming the field, which that
# check counts as a failure. What the schema can say (types, enums, bounds, formats, empty
# filters), the negative checks hold the API to.
CHECKS = [
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    negative_data_rejection,
]
# Along links the calls act on rows earlier calls made or changed: answers must still be
# no server error and match the schema; the request-side checks run per operation above.
SEQUENCE_CHECKS = [not_a_server_error, response_schema_conformance]

# Thousands of generated calls: make test runs them, make test-fast leaves them out.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.fuzz]


def exercise(
    operation,
    mode: GenerationMode,
    *,
    base_url: str,
    token: str,
    path_parameters: dict | None = None,
) -> None:
    strategy = operation.as_strategy(generation_mode=mode, path_parameters=path_parameters)

    @given(case=strategy)
    @settings(
        max_examples=MAX_EXAMPLES,
        deadline=None,
        database=None,
        derandomize=True,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    def run(case) -> None:
        headers = {"Authorization": f"Bearer {token}"}
        if mode == GenerationMode.POSITIVE and "Idempotency-Key" in (case.headers or {}):
            # Hypothesis reuses values; a key reused with another body is refused (422) by
            # design, so every valid call gets a key of its own.
            headers["Idempotency-Key"] = uuid.uuid4().hex
        case.call_and_validate(base_url=base_url, headers=headers, checks=CHECKS)

    run()


def existing_objects() -> dict[str, dict[str, str]]:
    """Path parameters naming real rows, by path prefix: generated ids rarely exist."""
    world = SimpleNamespace(
        payments=Tenant.objects.get(slug="payments"), member=User.objects.get(username="dev")
    )
    prod = submit(world, tier="prod", app="awaiting")
    # Approved by hand if need be: an earlier transactional test's flush may have removed
    # the default approval rules (a data migration) that approve dev automatically.
    failed = approve_if_needed(
        submit(world, tier="dev", app="failing"), approver=User.objects.get(username="pat")
    )
    run = services.start_provisioning(request_id=failed.pk, plan_digest="x")
    services.mark_failed(run=run, error="refused by the API server")
    project = Project.objects.create(tenant=world.payments, name="billing")
    namespace = Namespace.objects.create(
        name="payments-billing-dev",
        tenant=world.payments,
        project=project,
        tier=EnvironmentTier.objects.get(slug="dev"),
        cluster=Cluster.objects.get(name="sandbox"),
        cpu_millis=500,
        memory_mib=512,
        state=NamespaceState.ACTIVE,
    )
    review = ask_for_environment(
        world.payments, world.member, project="billing", env_slug="review-1"
    )
    environment = EphemeralEnvironment.objects.get(request=review)
    # Revoked and removed already: revoking it again asks no cluster.
    deploy_token = DeployToken.objects.create(
        namespace=namespace,
        minted_by=world.member,
        service_account="berth-deploy-0123456789",
        cluster_role="berth-tenant-edit",
        audience="",
        expires_at=timezone.now(),
        revoked_at=timezone.now(),
        removed_at=timezone.now(),
    )
    # sam (of search) asked for viewer on it, approved: revoking it once ends it, then 409.
    grant = services.request_access(
        person=User.objects.get(username="sam"),
        namespace=namespace.name,
        role="viewer",
        duration="1h",
        reason="schemathesis",
    )
    approve_if_needed(grant.request, approver=User.objects.get(username="pat"))
    return {
        "/api/v1/access-grants/": {"id": str(grant.pk)},
        "/api/v1/deploy-tokens/": {"id": str(deploy_token.pk)},
        "/api/v1/environments/": {"id": str(environment.pk)},
        "/api/v1/requests/{id}/runs/": {"id": str(failed.pk)},
        "/api/v1/requests/{id}/retry/": {"id": str(failed.pk)},
        "/api/v1/requests/": {"id": str(prod.pk)},
        "/api/v1/namespaces/": {"id": str(namespace.pk)},
        "/api/v1/projects/": {"id": str(project.pk)},
        "/api/v1/audit-events/": {"id": str(AuditEvent.objects.order_by("id").first().pk)},
        "/api/v1/tenants/": {"slug": "search"},
        "/api/v1/clusters/": {"name": "sandbox"},
        "/api/v1/tiers/": {"slug": "dev"},
        "/api/v1/access/groups/": {"group": "payments-devs"},
        "/api/v1/campaigns/": {"id": "1"},
        "/api/v1/access/people/": {"username": "dev"},
        "/api/v1/access/namespaces/": {"name": namespace.name},
        "/api/v1/backstage/": {"slug": "payments"},
    }


@pytest.fixture
def hypothesis_home(tmp_path):
    """Hypothesis' caches in a temporary directory, not .hypothesis/ in the work tree."""
    previous = configuration.storage_directory()
    configuration.set_hypothesis_home_dir(str(tmp_path / "hypothesis"))
    yield
    configuration.set_hypothesis_home_dir(str(previous))


def test_the_api_keeps_its_schema_and_never_errs(
    live_server,
    settings,
    hypothesis_home,
):
    settings.BERTH_API_RATE = "1000000/min"
    demo.seed(sandbox_api_url="http://127.0.0.1:9")
    admin = User.objects.get(username="pat")
    token = services.create_api_token(
        user=admin, name="schemathesis", scopes=["read", "request", "approve", "admin"]
    )[1]
    known = existing_objects()
    api_schema = schemathesis.openapi.from_url(f"{live_server.url}/api/schema/?format=json")

    failures: list[str] = []
    exercised = 0
    for result in api_schema.get_all_operations():
        operation = result.ok()
        passes: list[tuple[GenerationMode, dict | None]] = [(mode, None) for mode in GenerationMode]
        if "{" in operation.path:  # and once more about a row that exists
            prefix = next(p for p in known if operation.path.startswith(p))
            passes.append((GenerationMode.POSITIVE, known[prefix]))
        for mode, path_parameters in passes:
            try:
                exercise(
                    operation,
                    mode,
                    base_url=live_server.url,
                    token=token,
                    path_parameters=path_parameters,
                )
            # schemathesis reports through exception groups: collect those too.
            except (Exception, BaseExceptionGroup) as exc:
                label = "existing row" if path_parameters else mode.value
                failures.append(f"{operation.method.upper()} {operation.path} ({label}):\n{exc}")
        exercised += 1

    assert exercised >= 25, exercised
    assert not failures, "\n\n".join(failures)


def test_sequences_of_calls_along_the_schemas_links_never_err(
    live_server,
    settings,
    hypothesis_home,
    tmp_path,
):
    """Stateful: schemathesis follows the OpenAPI links (a list's first row or a create's
    answer → its detail → its actions) with generated data, so the calls reach rows that
    exist, not only 404s."""
    settings.BERTH_API_RATE = "1000000/min"
    # The same sequence must meet the same answers from one example to the next: no clock
    # in them (a truth table may otherwise be retaken only every N seconds), and no retry
    # jitter in the server's thread, which draws from the global `random` that Hypothesis
    # seeds for each example in this thread (the clusters here are unreachable, so every
    # call to one would retry).
    settings.BERTH_TRUTH_REFRESH_SECONDS = 0
    settings.KUBE_MAX_ATTEMPTS = settings.BERTH_GIT_MAX_ATTEMPTS = 1
    demo.seed(sandbox_api_url="http://127.0.0.1:9")
    existing_objects()  # rows for the lists to lead to
    admin = User.objects.get(username="pat")
    token = services.create_api_token(
        user=admin, name="stateful", scopes=["read", "request", "approve", "admin"]
    )[1]
    api_schema = schemathesis.openapi.from_url(f"{live_server.url}/api/schema/?format=json")
    answered: list[tuple[str, int]] = []

    # Every sequence starts from these rows: Hypothesis requires that the same draws meet
    # the same answers, and a call of one sequence (a tenant patched, a request approved)
    # would otherwise change what a later sequence's identical first calls are answered.
    snapshot = tmp_path / "start.json"
    call_command("dumpdata", "tenants", "provisioning", output=str(snapshot), verbosity=0)

    class Calls(api_schema.as_state_machine()):  # type: ignore[misc]
        def teardown(self):
            call_command("flush", interactive=False, verbosity=0)
            call_command("loaddata", str(snapshot), verbosity=0)

        def get_call_kwargs(self, case):
            return {"base_url": live_server.url, "headers": {"Authorization": f"Bearer {token}"}}

        def after_call(self, response, case):
            answered.append((f"{case.method} {case.path}", response.status_code))

        def validate_response(self, response, case, additional_checks=None, **kwargs):
            case.validate_response(response, checks=SEQUENCE_CHECKS)

    Calls.run(
        settings=hypothesis.settings(
            max_examples=100,
            stateful_step_count=8,
            deadline=None,
            database=None,
            # No shrinking: a sequence's calls change the server's rows, so a replay cannot
            # draw the same sequence, and Hypothesis would hide the failure behind "flaky".
            phases=[Phase.explicit, Phase.generate],
            derandomize=True,
            suppress_health_check=list(HealthCheck),
        )
    )
    reached = {call for call, status in answered if "{" in call and 200 <= status < 300}
    # Links led to real rows: details and sub-resources answered with data, not 404.
    print(f"links reached {len(reached)} operations with data: {sorted(reached)}")
    assert len(reached) >= 5, sorted(reached)
