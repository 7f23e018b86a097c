"""verify.adapters.opacus: the accountant's steps, history, length and state against opacus's conventions, its
certified bracket against dp_accounting's optimistic/pessimistic pair, and (where opacus and torch are installed:
`nox -s adapters`) a real opacus training loop with `PrivacyEngine(accountant="verify")`, its checkpoint round trip,
and opacus's own RDP and PRV answers, each a claimed upper bound that the certified lower end must not exceed."""

from __future__ import annotations

import itertools
import pickle
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples  # tests/ is on the path (pytest's rootdir-based imports)

from verify.adapters.opacus import VerifyOpacusAccountant

REL = 1e-9  # float slack in comparing two libraries' numbers, far below either's discretisation
RUNS = st.lists(st.tuples(st.sampled_from([0.8, 1.1, 2.0]), st.sampled_from([0.01, 0.05, 0.25]), st.integers(1, 25)),
                min_size=1, max_size=3)


def stepped(runs) -> VerifyOpacusAccountant:
    acc = VerifyOpacusAccountant()
    for sigma, q, n in runs:
        for _ in range(n):
            acc.step(noise_multiplier=sigma, sample_rate=q)
    return acc


@settings(max_examples=examples(3, 25), deadline=None, database=None)
@given(runs=RUNS, delta=st.floats(1e-8, 1e-4))
def test_steps_merge_as_opacus_history_and_the_bracket_reaches_dp_accountings_pair(runs, delta):
    dp_pair = pytest.importorskip("dp_reference").dp_pair  # it needs dp_accounting
    acc = stepped(runs)
    each = [(sigma, q) for sigma, q, n in runs for _ in range(n)]
    assert acc.history == [(sigma, q, len(list(g))) for (sigma, q), g in itertools.groupby(each)]
    assert len(acc) == len(each) and acc.mechanism() == "verify"
    r = acc.get_epsilon_bracket(delta)
    optimistic, pessimistic = dp_pair([(q, sigma, n) for sigma, q, n in acc.history], delta=delta)
    assert r.upper >= optimistic * (1 - REL) and r.lower <= pessimistic * (1 + REL)


def test_state_dict_round_trip_and_refusals():
    acc = stepped([(1.1, 0.05, 3), (0.8, 0.01, 2)])
    state = pickle.loads(pickle.dumps(acc.state_dict()))  # as a checkpoint stores it
    assert state == {"history": [(1.1, 0.05, 3), (0.8, 0.01, 2)], "mechanism": "verify"}
    back = VerifyOpacusAccountant()
    back.load_state_dict(state)
    assert back.history == acc.history
    for bad in ({}, {"history": []}, {"history": [], "mechanism": "rdp"}, {"history": [(1.0, 1.5, 1)],
                "mechanism": "verify"}, {"history": [(1.0, 0.1)], "mechanism": "verify"}):
        with pytest.raises(ValueError):
            back.load_state_dict(bad)
    assert back.history == acc.history  # a refused state changes nothing


def test_no_steps_zero_noise_and_zero_rate():
    assert VerifyOpacusAccountant().get_epsilon(1e-5) == 0.0
    assert stepped([(0.0, 0.1, 1)]).get_epsilon(1e-5) == float("inf")  # no noise: no privacy
    assert stepped([(1.0, 0.0, 5)]).get_epsilon(1e-5) == 0.0  # nobody sampled


def test_the_accountant_works_without_opacus_and_register_says_what_it_needs():
    code = ("import sys; sys.modules['opacus'] = None\n"
            "from verify.adapters.opacus import VerifyOpacusAccountant, register\n"
            "acc = VerifyOpacusAccountant(); acc.step(noise_multiplier=1.0, sample_rate=0.1)\n"
            "print(type(acc).__mro__[1].__name__, acc.get_epsilon(1e-5) > 0)\n"
            "try:\n    register()\nexcept ImportError as err:\n    print('ImportError', 'opacus' in str(err))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300)
    assert done.stdout.split() == ["object", "True", "ImportError", "True"]


def train(engine, steps: int = 3):
    """A tiny real opacus training loop: a linear model on 64 random points, batches of 16 (sampling rate 1/4,
    Poisson), noise multiplier 1, `steps` optimiser steps on the CPU."""
    torch = pytest.importorskip("torch")
    from torch.utils.data import DataLoader, TensorDataset

    torch.manual_seed(0)
    x, y = torch.randn(64, 5), torch.randn(64, 1)
    model = torch.nn.Linear(5, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer, loader = engine.make_private(module=model, optimizer=optimizer, noise_multiplier=1.0,
                                                   data_loader=DataLoader(TensorDataset(x, y), batch_size=16),
                                                   max_grad_norm=1.0)
    for xb, yb in itertools.islice(loader, steps):
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(xb), yb).backward()
        optimizer.step()
    return model, optimizer


@pytest.mark.filterwarnings("ignore::UserWarning")  # opacus's own warnings (secure RNG, PRV's "not checked")
def test_opacus_training_with_the_verify_accountant(tmp_path):
    pytest.importorskip("opacus")
    dp_pair = pytest.importorskip("dp_reference").dp_pair
    from opacus import PrivacyEngine
    from opacus.accountants import PRVAccountant, RDPAccountant

    engine = PrivacyEngine(accountant="verify")  # registered on import of verify.adapters.opacus
    assert isinstance(engine.accountant, VerifyOpacusAccountant)
    model, optimizer = train(engine)
    assert engine.accountant.history == [(1.0, 0.25, 3)] and len(engine.accountant) == 3
    ours = engine.accountant.get_epsilon_bracket(1e-5)
    assert engine.get_epsilon(1e-5) >= ours.lower  # a certified upper end (its own query, its own time budget)
    optimistic, pessimistic = dp_pair([(0.25, 1.0, 3)], delta=1e-5)
    assert ours.upper >= optimistic and ours.lower <= pessimistic
    for Peer in (RDPAccountant, PRVAccountant):  # each claims an upper bound: the tight value lies below it
        peer = Peer()
        peer.history = list(engine.accountant.history)
        assert ours.lower <= peer.get_epsilon(1e-5)

    engine.save_checkpoint(path=tmp_path / "checkpoint.pt", module=model, optimizer=optimizer)
    resumed = PrivacyEngine(accountant="verify")
    resumed.load_checkpoint(path=tmp_path / "checkpoint.pt", module=model, optimizer=optimizer)
    assert resumed.accountant.history == engine.accountant.history
    assert resumed.get_epsilon(1e-5) >= ours.lower

    other = PrivacyEngine()  # the other way in: an engine's accountant set before make_private
    other.accountant = VerifyOpacusAccountant()
    train(other)
    assert other.accountant.history == engine.accountant.history


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_opacus_calibrates_the_noise_with_the_verify_accountant():
    """make_private_with_epsilon searches the noise with the registered accountant: the certified eps of the noise
    it picks is at most the target, and dp_accounting's optimistic estimate agrees."""
    pytest.importorskip("opacus")
    dp_pair = pytest.importorskip("dp_reference").dp_pair
    from opacus.accountants.utils import get_noise_multiplier

    sigma = get_noise_multiplier(target_epsilon=3.0, target_delta=1e-5, sample_rate=0.25, steps=4,
                                 accountant="verify")
    acc = VerifyOpacusAccountant()
    acc.history = [(sigma, 0.25, 4)]
    assert acc.get_epsilon(1e-5) <= 3.0 and dp_pair([(0.25, sigma, 4)], delta=1e-5)[0] <= 3.0
