"""A GitHub-compatible forge stand-in, served over real HTTP for PyGithub and any REST client.

No forge can run where Berth is developed and tested, so this package serves the slice of
GitHub's REST API that opening pull requests needs, backed by real git repositories, so
that a git client pushes a branch and the stand-in sees it, and a merge made here is a real
merge commit a later fetch gets. It knows nothing of Berth or Django.

What it speaks (under ``/api/v3``, GitHub Enterprise Server's API root):

* ``GET /user``; ``GET /repos/{owner}/{repo}``;
  ``GET /repos/{owner}/{repo}/collaborators/{username}/permission`` (admin, write, read,
  none, with the finer ``role_name``).
* Pull requests: ``POST``/``GET /repos/{owner}/{repo}/pulls`` (``state``, ``head``,
  ``base`` filters, pages with a ``Link`` header), ``GET``/``PATCH .../pulls/{number}``
  (title, body, base, state), ``PUT .../pulls/{number}/merge`` (merge or squash, made with
  git on the bare repository; 405 on a conflict, 409 when ``sha`` is not the head's).
  Refused with GitHub's 422 "Validation Failed" shape: head equal to base or already in it,
  a missing branch, a second open pull request for the same head.
* Webhooks: ``POST``/``GET /repos/{owner}/{repo}/hooks``, ``GET``/``PATCH``/``DELETE
  .../hooks/{hook_id}``; ``ping`` on creation,
  ``pull_request`` on opened, edited, closed (``merged`` true or false) and reopened,
  signed as GitHub signs (``webhooks``).
* Tokens: ``Authorization: token X`` or ``Bearer X``; 401 without or with an unknown one;
  404 for a repository the token's user may not see (GitHub hides it), 403 for what they see
  but may not do.

Every request and every answer is checked with openapi-core against GitHub's own OpenAPI
description (``spec``, ``validation``): a request that does not conform is refused as GitHub
refuses it; an answer that does not conform is the stand-in's bug, answered 500 with the
validation error and recorded (``ForgeSandbox.invalid_responses``).

Beside it, under ``/gitlab/api/v4``, the GitLab REST subset python-gitlab sends for merge
requests over the same repositories (``gitlab``): projects, members, merge requests (open,
list, read, close, reopen, merge), hooks with GitLab's Merge Request Hook; each operation's
parameters checked as GitLab's documentation gives them (``gitlab_params``).
Under ``/gitea/api/v1``, Gitea's (and Forgejo's) API v1 subset for pull requests
(``gitea``): the repository with the caller's permissions, pull requests (open, list, read,
close, reopen, merge), hooks with Gitea's ``pull_request`` event signed in
``X-Gitea-Signature``; each operation's parameters checked as Gitea documents them.

The repositories (``<root>/<owner>/<name>.git``) are served over git's HTTP protocol by
whatever the caller runs beside it (the project's git server in its tests), at ``git_url``.

Web pages for a person reviewing (``web``), with no token: a pull request at its
``html_url`` (``/<owner>/<repo>/pull/<number>``) with its diff from git and Merge and Close
buttons that merge and close as ``merge_as_reviewer`` and ``close_as_reviewer`` do, and a
repository's pull requests (``/<owner>/<repo>/pulls``).

Test controls (``ForgeSandbox`` methods, and ``/_sandbox/`` over HTTP, ``controls``): make
users, repositories and collaborators, merge or close a pull request as a reviewer in the web
UI, push a commit onto a branch underneath, read the request log and webhook deliveries.

What it does not do: everything else of GitHub (issues but a pull request's own, reviews,
checks, branches API, contents, rebase merges, forks, organisations' teams), conditional
requests, rate limits, and ``mergeable`` computed later: it is computed at once on every
read.
"""

from .model import ForgeError, Pull, Repo
from .server import API_PREFIX, ForgeSandbox, ResponseInvalid
from .spec import SpecMissing

__all__ = [
    "API_PREFIX",
    "ForgeError",
    "ForgeSandbox",
    "Pull",
    "Repo",
    "ResponseInvalid",
    "SpecMissing",
]
