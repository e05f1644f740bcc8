# The GitOps loop's world (tests/support/gitops_loop.py), for the tests here that provision
# through it: `gitops_world`, its stand-in `sandbox` and its
# git `server`.
from tests.support.gitops_loop import (  # noqa: F401 - fixtures
    gitops_world,
    loop_repositories,
    loop_server,
    prod_change,
    provisioned,
    sandbox,
    server,
)
