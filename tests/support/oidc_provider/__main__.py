"""`python -m tests.support.oidc_provider`: the test provider, until it is stopped."""

from tests.support.oidc_provider.server import main

main()
