"""Draws docs/assets/audit/dpsgd_buggy.png and dpsgd_fixed.png: `verify audit` of the two DP-SGD files with --plot
(run from the repository root: python examples/audit_zoo/make_figures.py; existing figures are left as they are)."""

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE.parents[1] / "docs" / "assets" / "audit"

for name in ("dpsgd_buggy", "dpsgd_fixed"):
    target = OUT / f"{name}.png"
    if target.exists():
        print(f"{target} exists: delete it to draw it again")
        continue
    command = [sys.executable, "-m", "verify", "audit", str(HERE / f"{name}.py"), "--samples", "1000", "--delta",
               "1e-5", "--assume", "gaussian", "--plot", str(target)]
    print("$", " ".join(command[1:]))
    subprocess.run(command, check=False, cwd=HERE)
