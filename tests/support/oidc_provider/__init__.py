"""OpenID Connect providers for end-to-end tests, each started in a process of its own.

1. A small provider the tests control (run as `python -m tests.support.oidc_provider`): discovery,
   JWKS, authorize (redirects straight back with a code, for whoever the test said signs in
   next), token (checks the client secret, the redirect URI and the PKCE verifier; answers
   an ID token and an access token, in one of ACCESS_TOKEN_FORMS), userinfo and end-session.
   A control endpoint chooses the next person's claims, the access token's form and, for
   negative tests, one defect in what comes back (see DEFECTS).
2. The development provider Berth ships (`python -m portal.devidp`, django-oidc-provider).

`running_test_provider()` and `running_dev_idp()` start them on free ports and stop them.

Inside: `contract` (Berth's client, the API audience, the access token forms and defects the
tests may ask for), `server` (the test provider's HTTP endpoints), `tokens` (its keys and the
tokens it signs) and `processes` (starting either provider, and the test side's handle).
"""

from tests.support.oidc_provider.contract import (
    ACCESS_TOKEN_FORMS,
    API_AUDIENCE,
    CLIENT_ID,
    CLIENT_SECRET,
    DEFECTS,
    KUBECTL_CLIENT_ID,
)
from tests.support.oidc_provider.processes import (
    TestProvider,
    free_port,
    running_dev_idp,
    running_test_provider,
)

__all__ = [
    "ACCESS_TOKEN_FORMS",
    "API_AUDIENCE",
    "CLIENT_ID",
    "CLIENT_SECRET",
    "DEFECTS",
    "KUBECTL_CLIENT_ID",
    "TestProvider",
    "free_port",
    "running_dev_idp",
    "running_test_provider",
]
