"""Ground-truth methods. These modules never import the catalog; each is imported on first use
(`verify.truth.numbers` after `import verify`)."""

from __future__ import annotations


def __getattr__(name: str) -> object:
    from verify import submodule

    return submodule(__name__, name)
