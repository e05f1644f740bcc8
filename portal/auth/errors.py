"""Why a sign-in was refused, in words a person can act on.

The reason travels to the failure page as a short code in the URL (never free text), so
nothing a provider or an attacker sends is echoed back on the page.
"""

from __future__ import annotations

REASONS: dict[str, str] = {
    "state": "The sign-in response did not belong to a sign-in started in this browser "
    "(missing, unknown or already used state). This happens when a sign-in page was "
    "left open too long, used twice, or opened from another browser.",
    "token": "The identity provider's ID token could not be verified (bad signature, wrong "
    "issuer or algorithm).",
    "audience": "The ID token was issued for another application, not for Berth.",
    "expired": "The ID token had expired. Check that the clocks of Berth and the identity "
    "provider agree.",
    "nonce": "The ID token did not answer this sign-in (nonce mismatch).",
    "subject": "The identity provider did not say who you are (no `sub` claim).",
    "inactive": "Your Berth account is deactivated.",
    "provider": "The identity provider refused the sign-in or returned an error.",
    "unreachable": "Berth could not reach the identity provider.",
    "not_configured": "Single sign-on is not configured.",
    "unknown": "Something unexpected went wrong.",
}


class SignInRefused(Exception):
    """A sign-in that must not succeed. `code` names the reason (a key of REASONS)."""

    def __init__(self, code: str, detail: str = "") -> None:
        assert code in REASONS, code
        self.code = code
        self.detail = detail  # for the log; never contains tokens or secrets
        super().__init__(f"{code}: {detail}" if detail else code)
