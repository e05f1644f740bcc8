"""What the tests and the test provider agree on: Berth's client, the audience of the access
tokens, the forms an access token may take and the defects a negative test may ask for."""

CLIENT_ID = "berth-test"
CLIENT_SECRET = "test-client-secret-0123456789"
# kubectl's public client of the development provider (kubelogin), as `make run` names it.
KUBECTL_CLIENT_ID = "kubernetes"
# The audience of the access tokens it mints: Berth's API, not its client.
API_AUDIENCE = "berth-api"
# How the next sign-in's access token looks (`access_token` of next_login):
ACCESS_TOKEN_FORMS = {
    "at+jwt": "an RFC 9068 JWT: header typ at+jwt, audience API_AUDIENCE (the default)",
    "jwt": "the same claims under a plain typ JWT header, as Keycloak and Entra ID send",
    "opaque": "a random string only the userinfo endpoint understands",
}

DEFECTS = {
    "tampered_signature": "the ID token is signed by another key under the provider's kid",
    "wrong_audience": "the ID token is for another client, the access token for another API",
    "expired": "the ID and access tokens expired ten minutes ago",
    "wrong_issuer": "the ID and access tokens name another issuer",
    "wrong_nonce": "the ID token answers another sign-in",
    "no_sub": "neither the ID token nor userinfo says who signed in",
    "drop_state": "the redirect back to Berth carries no state",
    "access_denied": "the provider redirects back with error=access_denied",
}
