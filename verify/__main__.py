"""`python -m verify`: the command line, as the `verify` script runs it (verify.cli.main)."""

import sys

from verify.cli import main

if __name__ == "__main__":
    sys.exit(main())
