# The GitOps loop's world (tests/support/gitops_loop.py): `gitops_world` and its `sandbox`, for
# the tests here that provision through it.
from tests.support.gitops_loop import (  # noqa: F401 - fixtures
    gitops_world,
    loop_repositories,
    loop_server,
    prod_change,
    provisioned,
    sandbox,
    server,
)
from tests.support.make_run import make_run_answering  # noqa: F401 - a fixture
