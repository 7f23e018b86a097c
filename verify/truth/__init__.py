"""Ground-truth methods. These modules never import the catalog; each is imported on first use
(`verify.truth.numbers` after `import verify`)."""

from __future__ import annotations

from verify import submodule  # the package itself, already imported: verify.errors and verify._version only


def __getattr__(name: str) -> object:
    return submodule(__name__, name)
