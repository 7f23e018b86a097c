"""Class 4 of the trust issue: every bad input is one clear line, exit 2, no traceback; documented exit codes."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import verify
import verify.testing
from verify.bounds import MAX_TERMS
from verify.cli import main
from verify.errors import ParameterError, VerifyError

SETTINGS = settings(max_examples=40, deadline=None, database=None, suppress_health_check=list(HealthCheck))
GOOD = {"alpha": "2", "sigma": "1", "eta": "0.1", "n": "10", "K": "5", "S": "4", "lam": "1"}
BAD_VALUES = {"alpha": ["1", "0.5", "-2", "inf", "-inf", "nan", "1e400", "abc", ""], "sigma": ["0", "-1", "inf", "nan"],
              "n": ["2.5", "0", "-3", "1e400"], "K": ["0.5", "-1", "inf"], "eta": ["0", "-0.1", "nan"]}


def _run(capsys, argv: list[str]) -> tuple[int, list[str]]:
    try:
        code = main(argv)
    except SystemExit as stop:  # argparse's own usage errors
        code = stop.code
    err = capsys.readouterr().err.strip().splitlines()
    return code, err


@SETTINGS
@given(name=st.sampled_from(sorted(BAD_VALUES)), data=st.data())
def test_bad_parameter_values_are_one_line_exit_2(name, data, capsys):
    value = data.draw(st.sampled_from(BAD_VALUES[name]))
    params = {**GOOD, name: value}
    argv = ["check", "chourasia2021.corollary1", *[a for k, v in params.items() for a in ("-p", f"{k}={v}")]]
    code, err = _run(capsys, argv)
    assert code == 2 and err and "Traceback" not in "\n".join(err)
    assert err[-1].startswith(("error:", "verify check: error:")) and name in err[-1]


@SETTINGS
@given(argv=st.sampled_from([
    ["check", "bogus.id"], ["check", "chourasia2021.corollary1", "-p", "bogus=1"], ["check", "x", "-p", "alpha"],
    ["run", "--only", "bogus"], ["run", "--falsify", "-5"], ["run", "--seed", "-1"], ["report", "--workers", "0"],
    ["report", "--workers", "-1"], ["report", "--falsify", "x"], ["list", "bogus"], ["families", "--x"],
    ["frobnicate"], [], ["falsify"], ["falsify", "--family", "bogus", "alpha"],
    ["falsify", "--family", "noisy_gd_quadratic", "alpha +"],
    ["falsify", "--family", "noisy_gd_quadratic", "__import__"],
    ["certify", "--lhs", "alpha", "--rhs", "2", "--box", "alpha=3:1"], ["certify", "--lhs", "alpha", "--rhs", "("],
]))
def test_bad_commands_are_one_line_exit_2(argv, capsys):
    code, err = _run(capsys, argv)
    assert code == 2 and err and "Traceback" not in "\n".join(err)
    assert "error" in err[-1]


def test_alpha_just_above_one_is_a_valid_order(capsys):
    params = {**GOOD, "alpha": "1.0000000000001"}
    code, err = _run(capsys, ["check", "chourasia2021.corollary1",
                              *[a for k, v in params.items() for a in ("-p", f"{k}={v}")]])
    assert code == 0 and not err


def test_check_exit_code_follows_the_verdict(capsys):
    assert main(["check", "feldman2018.theorem1", "-p", "alpha=2", "-p", "K=1", "-p", "D0=10", "-p", "kappa=1",
                 "-p", "sigma=1e200"]) == 1  # VIOLATED (certified), even though both floats underflow
    out = capsys.readouterr().out
    assert "VIOLATED" in out and "certificate" in out
    assert main(["check", "feldman2018.theorem1.corrected", "-p", "alpha=2", "-p", "K=1", "-p", "D0=10",
                 "-p", "kappa=1", "-p", "sigma=1e-200"]) == 0


def test_list_into_a_closed_pipe_is_quiet():
    out = subprocess.run(f"{sys.executable} -c 'import sys; from verify.cli import main; sys.exit(main())' list "
                         "| head -1", shell=True, capture_output=True, text=True, timeout=60)
    assert "BrokenPipe" not in out.stderr and "Traceback" not in out.stderr and out.stdout.strip()


def test_certify_never_certifies_where_a_side_is_not_real(capsys):
    code = main(["certify", "--lhs", "sqrt(alpha-2)", "--rhs", "10", "--box", "alpha=1:3"])
    assert code == 1 and "COUNTEREXAMPLE" in capsys.readouterr().out
    assert main(["certify", "--lhs", "sqrt(alpha-0.5)", "--rhs", "10", "--box", "alpha=1:3"]) == 0


@SETTINGS
@given(call=st.sampled_from([
    lambda: verify.check("chourasia2021.corollary1", alpha="x", sigma=1, eta=0.1, n=10, K=5, S=4, lam=1),
    lambda: verify.check("chourasia2021.corollary1", alpha=None, sigma=1, eta=0.1, n=10, K=5, S=4, lam=1),
    lambda: verify.check("chourasia2021.corollary1", alpha=float("inf"), sigma=1, eta=0.1, n=10, K=5, S=4, lam=1),
    lambda: verify.check("nope"), lambda: verify.family("nope"), lambda: verify.theorem("nope"),
    lambda: verify.family("noisy_gd_quadratic").truth("bogus_quantity"),
    lambda: verify.family("noisy_gd_quadratic").truth(alpha=[1, 2]),
    lambda: verify.family("sampled_gaussian").truth(alpha=2, q=2, sigma=1),
    lambda: verify.family("sampled_gaussian").truth(alpha=2, q=0.1, sigma=float("nan")),
    lambda: verify.testing.falsify("alpha", "noisy_gd_quadratic", side=["upper"]),
    lambda: verify.testing.falsify("alpha", "noisy_gd_quadratic", max_examples=0),
    lambda: verify.testing.falsify("alpha", "noisy_gd_quadratic", budget_s=float("nan")),
    lambda: verify.testing.falsify("alpha", "noisy_gd_quadratic", quantity="bogus"),
]))
def test_bad_api_input_raises_a_verify_error(call):
    with pytest.raises(VerifyError):
        call()


@pytest.mark.parametrize(("argv", "hint"), [
    (["list", "chen2024.theorm4_6"], "did you mean 'chen2024.theorem4_6'"),
    (["list", "chourasia"], "did you mean 'chourasia2021'"),
    (["run", "--only", "feldman2018.theorem2"], "did you mean 'feldman2018.theorem"),
    (["falsify", "--family", "sampled_gausian", "1"], "did you mean 'sampled_gaussian'"),
    (["falsify", "--family", "sampled_gaussian", "alpha/sigm**2"], "did you mean 'sigma'"),
    (["falsify", "--family", "sampled_gaussian", "--fix", "sigm=1", "alpha"], "did you mean 'sigma'"),
    (["check", "chen2024.theorem4_6", "--family", "mbcd_quadratic_shuffled", "--param", "kappa_hh=1"],
     "did you mean 'kappa_h'"),
])
def test_a_misspelt_name_gets_the_closest_known_names(argv, hint, capsys):
    """difflib's close matches among the names verify knows (ids, paper keys, families, parameters, symbols)."""
    assert main(argv) == 2
    assert hint in capsys.readouterr().err


# extreme values a user may type, on entries whose truths run float kernels (a probe found each of them exit 4)
EXTREME_POINTS = {
    "thudi2024.baseline_dp": dict(q=0.00213333, delta=1e-5, sigma=None),
    "feldman2018.lemma27.dp": dict(delta=1e-10, eps=None),
    "feldman2018.theorem29.utility": dict(L=1, d=1, eps=0.5, delta=1e-5, n=10, start=1, R=None),
    "feldman2018.corollary34.utility": dict(L=1, d=2, eps=0.5, delta=1e-5, n=10, start=1, R=None),
    "chen2024.composition": dict(alpha=2, eta=0.05, mu=0.4, b=10, m=2, K=1, o=1e-3, o_last=1e-3, o_rate=1, wd=0,
                                 S=None),
    "thudi2024.rdp_to_dp.classical": dict(alpha=2, sigma=0.5, delta=1e-5, q=None),
}


@settings(max_examples=15, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(entry=st.sampled_from(sorted(EXTREME_POINTS)),
       value=st.sampled_from([1e308, 1e300, 1e-300, 1e-320, 5e-324, 1.0000000000000002]))
def test_extreme_values_are_a_verdict_or_one_line_exit_2_or_3(entry, value, capsys):
    """A truth's float kernel that cannot take a value (a division by an underflowed 0, NaN or inf converted to an
    integer, an interval inverted by subnormal rounding) and a bound that turns complex are refused with the reason,
    never an internal error (exit 4)."""
    params = {k: (value if v is None else v) for k, v in EXTREME_POINTS[entry].items()}
    code, err = _run(capsys, ["check", entry, *[a for k, v in params.items() for a in ("-p", f"{k}={v!r}")]])
    assert code in (0, 1, 2, 3), err  # 3: an INCONCLUSIVE verdict (on stdout) or a cap hit
    if code == 2 or err:
        assert len(err) == 1 and err[0].startswith("error:") and "Traceback" not in err[0]


# values a hostile probe found exit 4 inside the former threshold 1e200, each drawn around the probe's value (None: the
# drawn value; "1/": its inverse); the bands leave out values where these truths are slow (up to a minute) but clean
BAND_POINTS = {
    "feldman2018.corollary31": (["--family", "skip_pnsgd_contracting"], dict(delta=1e-10, eps=None), (1e25, 1e60)),
    "chourasia2021.theorem7": ([], dict(alpha=30, sigma=1, K=10, n=100, lam=1, delta=0.01, start_var=0, eta=None),
                               (1e25, 1e60)),
    "wang2021.strongly_convex_lipschitz": ([], dict(lam=1.0, d=1, sigma=0.1, K=50, start=1.0, R=None), (1e150, 1e200)),
    "thudi2024.rdp_to_dp.classical": ([], dict(alpha=4, q=1.0, delta=1e-5, sigma="1/"), (1e190, 1e200)),
    "chen2024.nmf.composition": (["--family", "nmf_hfl_mc"], dict(K=3, kappa_h=1.1, alpha=None), (1e20, 1e200)),
}


@settings(max_examples=8, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(entry=st.sampled_from(sorted(BAND_POINTS)), data=st.data())
def test_large_values_below_the_old_extreme_are_never_an_internal_error(entry, data, capsys):
    """eps = 1e30 asked mpmath for 1e42 extra bits (its integer shift overflowed), x0**2 overflowed at R = 1e199,
    1/(2 sigma^2) divided by an underflowed 0 at sigma = 1e-199, a Renyi estimate was NaN at alpha = 1e25: each was
    exit 4. Now a precision cap (exit 3) or a refusal of the value (exit 2), one line, or a verdict."""
    options, point, (low, high) = BAND_POINTS[entry]
    value = data.draw(st.floats(low, high))
    params = {k: (v if v not in (None, "1/") else value if v is None else 1 / value) for k, v in point.items()}
    code, err = _run(capsys, ["check", entry, *options, *[a for k, v in params.items() for a in ("-p", f"{k}={v!r}")]])
    assert code in (0, 1, 2, 3), err
    if code == 2 or err:
        assert len(err) == 1 and err[0].startswith("error:") and "internal error" not in err[0], err


@settings(max_examples=4, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(alpha=st.one_of(st.integers(MAX_TERMS + 2, 10**15).map(float), st.sampled_from([1e18, 1e100, 1e308])))
def test_an_order_beyond_the_term_cap_is_a_cap_on_the_bound_at_once(alpha, capsys):
    """The sampled Gaussian's RDP bound sums over k <= alpha: alpha = 1e308 ran until the point's 120 s deadline,
    which then named the truth. Past MAX_TERMS terms it is a cap (exit 3) naming the bound's sum."""
    code, err = _run(capsys, ["check", "thudi2024.rdp_to_dp.classical.composed", "--family",
                              "sampled_gaussian_composed", "-p", f"alpha={alpha!r}", "-p", "q=0.01", "-p", "sigma=1.0",
                              "-p", "steps=10", "-p", "delta=1e-05"])
    assert code == 3 and len(err) == 1 and f"more than {MAX_TERMS}" in err[0] and "sampled Gaussian" in err[0]


def test_empty_selections_and_paths_are_refused(capsys, tmp_path):
    """`--only` with no id ran the whole catalog and `--json ""` wrote nothing, silently; both are usage errors."""
    code, err = _run(capsys, ["run", "--only", "--quiet"])
    assert code == 2 and "--only" in err[-1]
    code, err = _run(capsys, ["run", "--only", "chourasia2021.corollary1.maintext", "--json", "", "--quiet"])
    assert code == 2 and "empty path" in err[-1]


def test_a_users_file_shaped_like_results_is_never_overwritten(capsys, tmp_path):
    """A results file names verify's schema: a user's JSON with the same three top-level keys is kept (it was
    overwritten); a file verify wrote is replaced."""
    mine = tmp_path / "mine.json"
    mine.write_text('{"schema_version": 1, "run": {}, "results": [], "mine": "precious"}')
    code, err = _run(capsys, ["run", "--only", "chourasia2021.corollary1.maintext", "--falsify", "0", "--json",
                              str(mine), "--quiet"])
    assert code == 2 and "not a verify results file" in err[-1] and "precious" in mine.read_text()
    ours = tmp_path / "ours.json"
    for _ in range(2):
        code, _err = _run(capsys, ["run", "--only", "chourasia2021.corollary1.maintext", "--falsify", "0", "--json",
                                   str(ours), "--quiet"])
        assert code == 0


def test_a_users_latest_link_is_never_replaced(capsys, tmp_path, monkeypatch):
    """reports/latest pointing at a folder of the user's (not a report) is left alone: the report is refused before
    it runs (it was re-pointed at the new report)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "reports" / "mydata").mkdir(parents=True)
    (tmp_path / "reports" / "latest").symlink_to("mydata")
    code, err = _run(capsys, ["report", "--only", "chourasia2021.corollary1.maintext", "--falsify", "0", "--workers",
                              "1", "--quiet"])
    assert code == 2 and "latest" in err[-1]
    assert (tmp_path / "reports" / "latest").readlink().name == "mydata"


@pytest.mark.parametrize("where", ["steps", "q", "sigma", "delta"])
def test_the_accountant_refuses_integers_beyond_floats(where):
    """10**400 raised a raw OverflowError (int too large to convert to float); it is a ParameterError."""
    from verify.accountant import epsilon

    q, sigma, steps, delta = 0.01, 1.0, 10, 1e-5
    huge = 10**400
    args = {"steps": (delta, [(q, sigma, huge)]), "q": (delta, [(huge, sigma, steps)]),
            "sigma": (delta, [(q, huge, steps)]), "delta": (huge, [(q, sigma, steps)])}[where]
    with pytest.raises(ParameterError):
        epsilon(*args)


@pytest.mark.parametrize(("value", "says"), [(2**53 + 1, "not exactly a float"), (10**400, "beyond the float range")])
def test_an_integer_a_float_cannot_hold_is_refused(value, says):
    """K = 2**53 + 1 silently became 2**53, and 10**400 was 'not a number'."""
    with pytest.raises(VerifyError, match=says):
        verify.check("chourasia2021.corollary1", alpha=2, sigma=1, eta=0.1, n=10, K=value, S=4, lam=1)


def test_a_warning_in_a_verify_process_is_one_line(tmp_path):
    """A warning (here an unwritable truth cache) prints `warning: ...` alone, not a source path and a code line."""
    code = ("import sys, warnings\nfrom verify.cli import _one_line_warnings\n_one_line_warnings()\n"
            "warnings.warn('--cache x: cannot add to it (No such file or directory)', RuntimeWarning)\n"
            "import numpy as np\nnp.float64(1e308) * 10\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert out.returncode == 0
    assert out.stderr.splitlines() == ["warning: --cache x: cannot add to it (No such file or directory)"]


def test_an_unknown_top_level_option_is_named(capsys):
    """`verify --versoin` said only that a command was required."""
    code, err = _run(capsys, ["--versoin"])
    assert code == 2 and err == ["error: unknown option --versoin (did you mean '--version'?); see `verify --help`"]


def test_a_dangling_latest_link_is_verifys_only_if_it_names_a_run(tmp_path):
    """A `latest` link whose folder is gone is replaced only where it names a run folder as verify names them."""
    from verify.reporting.build import _our_link

    reports = tmp_path / "reports"
    reports.mkdir()
    (reports / "latest").symlink_to("20261127T204700Z")
    assert _our_link(reports / "latest")
    (reports / "latest").unlink()
    (reports / "latest").symlink_to("my-notes")
    assert not _our_link(reports / "latest")


@settings(max_examples=4, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(S=st.floats(1e300, 1.7e308))
def test_a_quadrature_window_beyond_any_panel_count_is_a_cap(S, capsys):
    """S ~ 1e308 spreads the shuffled block's mixture over more than 1e308 of its narrowest widths: the panel count
    overflowed math.ceil (an OverflowError, reported as bad input, exit 2); the quadrature's memory cap refuses it
    (exit 3, one line)."""
    argv = ["check", "chen2024.composition", "-p", f"S={S!r}", "-p", "mu=0.4", "-p", "alpha=2", "-p", "m=2",
            "-p", "K=5", "-p", "o_last=0.01", "-p", "o=0.001", "-p", "wd=0"]
    code, err = _run(capsys, argv)
    assert code == 3 and len(err) == 1 and "mixture quadrature" in err[0], err


@settings(max_examples=30, deadline=None, database=None)
@given(hi=st.floats(1e12, 1.7e308))
def test_a_cap_message_never_prints_a_huge_integer(hi):
    """A sum's range up to 1.7e308 was printed as a 309-digit integer in the cap's one line; counts from 10^12 on
    are shown in scientific notation (three digits)."""
    from decimal import Decimal

    from verify.bounds import integer_range
    from verify.errors import ResourceLimitError

    hi = float(int(hi))
    with pytest.raises(ResourceLimitError) as caught:
        integer_range(0, hi)
    message = str(caught.value)
    assert len(message) < 80, message
    shown = float(message.split(" has ")[1].split(" terms")[0])
    assert math.isclose(shown, float(Decimal(int(hi)) + 1), rel_tol=5e-3)
