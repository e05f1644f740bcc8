"""Commits made in memory, written with one fast-import, against a local bare
repository: the commits of one push build on each other with their messages kept verbatim, a
file's mode survives Berth's rewrite, and paths reach fast-import quoted as it reads them."""

from __future__ import annotations

import pytest

from provisioning import gitops
from tests.support.gitserver import commits_on, files_on, git


def test_commits_of_one_push_build_on_each_other_with_their_messages_kept_verbatim(
    db, repos, local_git, fast_git
):
    """The second proposal reads what the first commit wrote, though neither is in the
    repository until the push: the cluster index of both apps, not just the last."""
    remote = gitops.Remote.parse(local_git.url("payments.git"))
    message = "Add shop\n\n  kept as written  \n\nBerth-Request: 7\nApproved-by: pat\n"

    def batch(work: gitops.Checkout):
        def first(checkout: gitops.Checkout) -> gitops.Proposal:
            current = checkout.read(["clusters/"])
            return gitops.Proposal(
                current=current,
                message=message,
                files={"clusters/sandbox/index.yaml": "- shop\n", "apps/shop/app.yaml": "shop\n"},
            )

        def second(checkout: gitops.Checkout) -> gitops.Proposal:
            current = checkout.read(["clusters/", "apps/cart/"])
            index = current["clusters/sandbox/index.yaml"] + "- cart\n"
            return gitops.Proposal(
                current=current,
                message="Add cart\n\nBerth-Request: 8\n",
                files={"clusters/sandbox/index.yaml": index, "apps/cart/app.yaml": "cart\n"},
            )

        return [(7, first), (8, second)]

    results = gitops.write_batch(remote, batch)

    bare = local_git.base / "payments.git"
    assert files_on(bare)["clusters/sandbox/index.yaml"] == "- shop\n- cart\n"
    newest, older, *_ = commits_on(bare)
    assert (older["sha"], newest["sha"]) == (results[7].sha, results[8].sha)
    assert older["body"].rstrip("\n") == message.rstrip("\n")
    assert (older["request"], newest["request"]) == ("7", "8")
    assert {r.pushes for r in results.values()} == {1}
    assert git("--git-dir", str(bare), "rev-parse", f"{newest['sha']}^") == older["sha"] + "\n"


def test_a_file_the_team_made_executable_stays_executable_when_berth_rewrites_it(
    db, repos, local_git, fast_git, tmp_path
):
    bare = local_git.base / "payments.git"
    work = tmp_path / "team"
    git("clone", "--quiet", str(bare), str(work))
    (work / "apps").mkdir()
    (work / "apps" / "hook.sh").write_text("#!/bin/sh\n")
    (work / "apps" / "hook.sh").chmod(0o755)
    git("add", "-A", cwd=work)
    git("-c", "user.name=Team", "-c", "user.email=t@x", "commit", "-qm", "hook", cwd=work)
    git("push", "-q", "origin", "HEAD:main", cwd=work)
    remote = gitops.Remote.parse(local_git.url("payments.git"))

    gitops.write(
        remote,
        lambda checkout: gitops.Proposal(
            current=checkout.read(["apps/"]),
            files={"apps/hook.sh": "#!/bin/sh\nexit 0\n"},
            message="Berth-Request: 9\n",
        ),
    )

    listed = git("--git-dir", str(bare), "ls-tree", "main", "apps/hook.sh")
    assert listed.startswith("100755 ")
    assert files_on(bare)["apps/hook.sh"] == "#!/bin/sh\nexit 0\n"


@pytest.mark.parametrize(
    ("path", "quoted"),
    [
        ("apps/shop/dev/app.yaml", b"apps/shop/dev/app.yaml"),
        ("apps/a file with spaces.yaml", b"apps/a file with spaces.yaml"),
        ('"quoted.yaml', b'"\\"quoted.yaml"'),
        ("line\nbreak", b'"line\\nbreak"'),
    ],
)
def test_paths_reach_fast_import_as_it_reads_them(path, quoted):
    from provisioning.gitops.checkout import _quoted

    assert _quoted(path) == quoted
