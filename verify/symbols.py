"""Shared SymPy symbols. Each carries the SymPy domain facts that hold everywhere it is used;
the sharper ranges (alpha > 1, eta < 1/beta, ...) are named assumptions of families and theorems."""

from __future__ import annotations

import sympy as sp

# Rényi order and noise
alpha = sp.Symbol("alpha", positive=True)
sigma = sp.Symbol("sigma", positive=True)
# step size, iterations, dataset size, dimension
eta = sp.Symbol("eta", positive=True)
K = sp.Symbol("K", integer=True, positive=True)
n = sp.Symbol("n", integer=True, positive=True)
d = sp.Symbol("d", integer=True, positive=True)
# loss geometry: curvature / strong convexity, smoothness, Lipschitz constant
lam = sp.Symbol("lam", positive=True)
beta = sp.Symbol("beta", positive=True)
L = sp.Symbol("L", positive=True)
# sensitivities: S = summed-gradient sensitivity S_g (Chourasia et al. Def. B.10), S_v vector-field sensitivity
S = sp.Symbol("S", nonnegative=True)
S_v = sp.Symbol("S_v", nonnegative=True)
# start law N(0, start_var I) (0 = fixed start); distance of the start mean to the minimiser
start_var = sp.Symbol("start_var", nonnegative=True)
dist = sp.Symbol("dist", nonnegative=True)
# analysis constants: LSI constant, Young split, diffusion time
c = sp.Symbol("c", positive=True)
gamma = sp.Symbol("gamma", positive=True)
T = sp.Symbol("T", nonnegative=True)
# privacy levels
eps = sp.Symbol("eps", positive=True)
eps_p = sp.Symbol("eps_p", positive=True)  # epsilon' of an RDP guarantee
eps_rdp = sp.Symbol("eps_rdp", nonnegative=True)  # an RDP level fed to a conversion
delta = sp.Symbol("delta", positive=True)
E0 = sp.Symbol("E0", nonnegative=True)  # E||theta_0 - theta*||^2
# one-pass / multi-epoch SGD (Feldman et al. 2018): index of the replaced record, gradient difference
t = sp.Symbol("t", integer=True, positive=True)
i = sp.Symbol("i", integer=True, positive=True)
Delta = sp.Symbol("Delta", nonnegative=True)  # sup_w ||grad f(w, x_t) - grad f(w, x_t')||
# contractive noisy iterations: start distance, contraction factor, shift budgets
D0 = sp.Symbol("D0", nonnegative=True)
kappa = sp.Symbol("kappa", real=True)  # slope of an affine contraction x -> kappa x + b
s = sp.Symbol("s", positive=True)  # standard deviation of a Gaussian pair
gap = sp.Symbol("gap", nonnegative=True)  # distance between the means of a Gaussian pair
z = sp.Symbol("z", nonnegative=True)  # shift of the shifted Rényi divergence
a = sp.Symbol("a", nonnegative=True)  # shift spent in a reduction step (Lemma 20)
db = sp.Symbol("db", real=True)  # offset between two affine maps
# subsampling and mixtures
q = sp.Symbol("q", positive=True)  # Poisson sampling rate
w = sp.Symbol("w", nonnegative=True)  # weight of a mixture component
gap1 = sp.Symbol("gap1", nonnegative=True)
gap2 = sp.Symbol("gap2", nonnegative=True)
# 1-D instances: constraint half-width, data positions, ridge
R = sp.Symbol("R", positive=True)  # constraint set C = [-R, R]
center = sp.Symbol("center", real=True)  # midpoint of the two datasets' means
x = sp.Symbol("x", real=True)  # the replaced record: x on D, -x on D'
xo = sp.Symbol("xo", real=True)  # value of the n - 1 shared records
# Monte-Carlo truths
samples = sp.Symbol("samples", integer=True, positive=True)
seed = sp.Symbol("seed", integer=True, nonnegative=True)
