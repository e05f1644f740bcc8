# The GitOps loop's world (tests/support/gitops_loop.py), for the tests here that provision
# through it: a `world` of this folder is that one, not the API tests' demo world.
from tests.support.gitops_loop import (  # noqa: F401 - fixtures
    prod_change,
    provisioned,
    sandbox,
    server,
    world,
)
