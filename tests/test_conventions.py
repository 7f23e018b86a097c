"""Named conventions: the same search as the hand-written --bind they stand for, and errors that name the problem."""

from __future__ import annotations

import pytest

from verify.cli import main
from verify.errors import ParameterError
from verify.testing import falsify_outcome

BOUND = "alpha*L**2*eta*K/(2*n**2*sigma**2)"


@pytest.mark.parametrize(("convention", "bind"), [("lipschitz_replace_one", {"L": "S/2"}),
                                                  ("lipschitz_add_remove", {"L": "S"})])
def test_a_convention_is_the_bind_it_names(convention, bind):
    named = falsify_outcome(BOUND, "noisy_gd_quadratic", seed=1, max_examples=60, conventions=(convention,))
    by_hand = falsify_outcome(BOUND, "noisy_gd_quadratic", seed=1, max_examples=60, bind=bind)
    assert (named.tried, named.checked, named.excluded) == (by_hand.tried, by_hand.checked, by_hand.excluded)
    assert (named.counterexample is None) == (by_hand.counterexample is None)
    if named.counterexample is not None:
        assert named.counterexample.params == by_hand.counterexample.params
        assert named.counterexample.bound == by_hand.counterexample.bound


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"conventions": ("nope",)}, "no convention 'nope'"),
    ({"conventions": ("lipschitz_replace_one",), "bind": {"L": "S"}}, "defined by a convention and by --bind"),
    ({"conventions": ("lipschitz_replace_one", "lipschitz_add_remove")}, "conventions disagree on L"),
])
def test_convention_errors_are_named(kwargs, message):
    with pytest.raises(ParameterError, match=message):
        falsify_outcome(BOUND, "noisy_gd_quadratic", max_examples=5, **kwargs)


def test_a_convention_needs_its_family_parameters():
    with pytest.raises(ParameterError, match="needs parameter"):
        falsify_outcome("alpha*L**2", "sampled_gaussian", max_examples=5, conventions=("lipschitz_replace_one",))


def test_cli_lists_and_uses_conventions(capsys):
    assert main(["conventions"]) == 0
    assert "lipschitz_replace_one" in capsys.readouterr().out
    assert main(["falsify", BOUND, "--family", "noisy_gd_quadratic", "--convention", "lipschitz_replace_one",
                 "--max-examples", "100"]) == 1
    assert "counterexample" in capsys.readouterr().out
