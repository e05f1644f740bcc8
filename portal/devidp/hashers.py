from django.contrib.auth.hashers import PBKDF2PasswordHasher


class DemoPasswordHasher(PBKDF2PasswordHasher):
    """Few iterations: the demo passwords are printed on the console, so a slow hash would
    protect nothing and only slow down every start and every sign-in."""

    iterations = 1_000
