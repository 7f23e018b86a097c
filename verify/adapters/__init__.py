"""Drop-in adapters: verify's certified accountant behind the interfaces that training code already calls.

- `verify.adapters.dp_accounting`: `VerifyAccountant`, a `dp_accounting.PrivacyAccountant` (needs dp-accounting);
- `verify.adapters.opacus`: `VerifyOpacusAccountant`, an opacus accountant, and `register()` for
  `PrivacyEngine(accountant="verify")` (a plain accountant where opacus is not installed).

Each answers the certified upper end of the bracket by default and the whole bracket on request. Importing this
package imports neither library; each submodule is imported when first named.
"""

from __future__ import annotations

from verify import submodule  # the package itself, already imported: verify.errors and verify._version only


def __getattr__(name: str) -> object:
    """Each submodule, imported on first use."""
    return submodule(__name__, name)
