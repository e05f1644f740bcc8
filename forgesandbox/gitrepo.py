"""The forge's repositories: bare git repositories on disk, changed only with git itself.

Branches, pull request heads and merges are real git objects, so whatever pushes over HTTP
(the project's git server serves the same directories) is what the forge sees, and a merge
made here is what a later fetch gets. Merges use ``git merge-tree --write-tree`` (git 2.38
or later): no work tree, so two merges into different repositories never share one."""

from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

ZERO = "0" * 40
# The forge's own commits (a merge, a commit "pushed" by a test) are the forge's, as GitHub
# signs its merges as GitHub; nothing of the calling user's git configuration is read.
FORGE_IDENTITY = {
    "GIT_AUTHOR_NAME": "Forge Sandbox",
    "GIT_AUTHOR_EMAIL": "noreply@forgesandbox.invalid",
    "GIT_COMMITTER_NAME": "Forge Sandbox",
    "GIT_COMMITTER_EMAIL": "noreply@forgesandbox.invalid",
}


class GitError(RuntimeError):
    """A git command failed where it should not have: a bug or a broken repository."""


@dataclass(frozen=True)
class MergeAttempt:
    tree: str | None  # the merged tree; None when the branches conflict
    conflicts: str  # what git said about the conflict


def _environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": tempfile.gettempdir(),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "LC_ALL": "C",
        **FORGE_IDENTITY,
        **(extra or {}),
    }


class Repository:
    """One bare repository."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def _run(
        self,
        *args: str,
        input: bytes | None = None,
        env: dict[str, str] | None = None,
        check: bool = True,
    ) -> subprocess.CompletedProcess[bytes]:
        proc = subprocess.run(  # noqa: S603 - fixed program, arguments from the forge itself
            ["git", f"--git-dir={self.path}", *args],  # noqa: S607 - git from PATH
            input=input,
            env=_environment(env),
            capture_output=True,
            check=False,
        )
        if check and proc.returncode != 0:
            raise GitError(f"git {' '.join(args)}: {proc.stderr.decode(errors='replace')}")
        return proc

    def _out(self, *args: str, **kwargs: object) -> str:
        return self._run(*args, **kwargs).stdout.decode().strip()  # type: ignore[arg-type]

    @classmethod
    def create(cls, path: Path, default_branch: str, files: dict[str, str] | None) -> Repository:
        """A bare repository; with ``files``, a first commit holding them on the branch."""
        path.parent.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run(  # noqa: S603 - fixed program, arguments from the forge itself
            ["git", "init", "--quiet", "--bare", "-b", default_branch, str(path)],  # noqa: S607
            env=_environment(),
            capture_output=True,
            check=False,
        )
        if proc.returncode != 0:
            raise GitError(proc.stderr.decode(errors="replace"))
        repository = cls(path)
        # Pushes over HTTP need it; `git http-backend` also reads http.receivepack.
        repository._run("config", "http.receivepack", "true")
        if files:
            repository.commit_files(default_branch, files, "Initial commit")
        return repository

    def branch_sha(self, branch: str) -> str | None:
        proc = self._run(
            "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}^{{commit}}", check=False
        )
        return proc.stdout.decode().strip() or None

    def set_ref(self, ref: str, new: str, old: str | None = None) -> bool:
        """Move ``ref`` to ``new``, only if it still points at ``old`` (when given)."""
        args = ["update-ref", ref, new] + ([old] if old is not None else [])
        return self._run(*args, check=False).returncode == 0

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        return (
            self._run("merge-base", "--is-ancestor", ancestor, descendant, check=False).returncode
            == 0
        )

    def merge_base(self, one: str, other: str) -> str | None:
        return self._out("merge-base", one, other, check=False) or None

    def attempt_merge(self, base: str, head: str) -> MergeAttempt:
        """The tree of merging ``head`` into ``base``, or why it conflicts (exit status 1)."""
        if self.merge_base(base, head) is None:
            return MergeAttempt(tree=None, conflicts="no history in common")
        proc = self._run("merge-tree", "--write-tree", "--name-only", base, head, check=False)
        lines = proc.stdout.decode().splitlines()
        if proc.returncode == 0:
            return MergeAttempt(tree=lines[0], conflicts="")
        if proc.returncode == 1:
            return MergeAttempt(tree=None, conflicts="\n".join(lines[1:]))
        raise GitError(f"git merge-tree: {proc.stderr.decode(errors='replace')}")

    def tree_of(self, commit: str) -> str:
        return self._out("rev-parse", f"{commit}^{{tree}}")

    def commit_tree(self, tree: str, parents: list[str], message: str) -> str:
        args = ["commit-tree", tree]
        for parent in parents:
            args += ["-p", parent]
        return self._out(*args, input=message.encode())

    def commit_files(
        self, branch: str, files: dict[str, str], message: str, start: str | None = None
    ) -> str:
        """A commit on top of ``branch`` writing ``files``, built with a throwaway index: what
        someone pushing to the branch does, without a clone. A new branch starts from
        ``start`` (a branch), else from nothing."""
        current = self.branch_sha(branch)
        parent = current or (self.branch_sha(start) if start else None)
        with tempfile.TemporaryDirectory() as tmp:
            index = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            if parent:
                self._run("read-tree", parent, env=index)
            for name, content in files.items():
                blob = self._out("hash-object", "-w", "--stdin", input=content.encode())
                self._run(
                    "update-index", "--add", "--cacheinfo", f"100644,{blob},{name}", env=index
                )
            tree = self._out("write-tree", env=index)
        sha = self.commit_tree(tree, [parent] if parent else [], message)
        if not self.set_ref(f"refs/heads/{branch}", sha, current or ZERO):
            raise GitError(f"{branch} moved while a commit was made on it")
        return sha

    def changed_files(self, base: str, head: str) -> list[str]:
        """Files the head changed since it left the base (what a PR shows)."""
        merge_base = self.merge_base(base, head) or base
        out = self._out("diff", "--name-only", merge_base, head)
        return [line for line in out.splitlines() if line]

    def diff(self, base: str, head: str) -> tuple[list[tuple[str, str, str]], str]:
        """What a pull request's page shows of it: the files the head changed since it left
        the base, each as ``(added, deleted, path)`` (``-`` for a binary file), and the
        unified diff, both from git."""
        merge_base = self.merge_base(base, head) or base
        options = ("--no-color", "--no-ext-diff", "--no-renames", merge_base, head, "--")
        counted = self._run("diff", "--numstat", "-z", *options).stdout.decode(errors="replace")
        files = []
        for entry in counted.split("\0"):
            added, _, rest = entry.partition("\t")
            deleted, _, path = rest.partition("\t")
            if path:
                files.append((added, deleted, path))
        return files, self._run("diff", *options).stdout.decode(errors="replace")

    def commit_count(self, base: str, head: str) -> int:
        return int(self._out("rev-list", "--count", f"{base}..{head}") or 0)

    def show_file(self, commit: str, name: str) -> str | None:
        proc = self._run("show", f"{commit}:{name}", check=False)
        return proc.stdout.decode() if proc.returncode == 0 else None

    def parents(self, commit: str) -> list[str]:
        return self._out("rev-list", "--parents", "-n", "1", commit).split()[1:]
