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
chains = sp.Symbol("chains", integer=True, positive=True)  # simulated chains behind a Rao-Blackwellised law
# hidden-state DP mini-batch block coordinate descent (Chen & Liu, seed 003)
b = sp.Symbol("b", integer=True, positive=True)  # batch size; m = n/b batches per epoch
j0 = sp.Symbol("j0", integer=True, nonnegative=True)  # batch holding the differing record (0-based)
steps = sp.Symbol("steps", integer=True, nonnegative=True)  # global steps run (epoch k, batch j: step k*m + j)
mu = sp.Symbol("mu", nonnegative=True)  # curvature of a block along the data direction (0: flat)
mu_c = sp.Symbol("mu_c", nonnegative=True)  # coupling (mu_c/2)(v - u)^2 between two released blocks
kappa_h = sp.Symbol("kappa_h", positive=True)  # Hessian-norm clipping threshold of DP-MBCD (eq. 6)
o = sp.Symbol("o", positive=True)  # noise magnitude: each step adds N(0, 2 eta o(k, j) I) inside the prox
o_last = sp.Symbol("o_last", positive=True)  # o(k, m - 1): the last batch of an epoch
o_rate = sp.Symbol("o_rate", positive=True)  # o(k, j) is multiplied by o_rate^k (per-epoch schedule)
wd = sp.Symbol("wd", nonnegative=True)  # weight decay r(theta) = (wd/2)||theta||^2, prox theta/(1 + eta wd)
L_F = sp.Symbol("L_F", nonnegative=True)  # Lipschitz constant of the gradient map F
L_T = sp.Symbol("L_T", nonnegative=True)  # Lipschitz constant of the prox T
alpha_p = sp.Symbol("alpha_p", positive=True)  # the reduced order alpha' of Corollary 4.5 case 1
R_prev = sp.Symbol("R_prev", nonnegative=True)  # R_alpha of the iterate before the step (Corollary 4.5)
gamma_lag = sp.Symbol("gamma_lag", positive=True)  # Lagrangian coefficient of the lifted network (eq. 4)
rho = sp.Symbol("rho", positive=True)  # norm clip of a layer input x_d (eq. 12)
d_in = sp.Symbol("d_in", integer=True, positive=True)  # input dimension of a layer
m = sp.Symbol("m", integer=True, positive=True)  # batches per epoch (n = m b records)
# per-instance DP-SGD (Thudi et al., seed 004): one step on a 1-D model, clip C = 1
g_star = sp.Symbol("g_star", real=True)  # clipped gradient of the added point x*
g_a = sp.Symbol("g_a", real=True)  # clipped gradient of the first cluster of D
g_b = sp.Symbol("g_b", real=True)  # clipped gradient of the second cluster of D
n_a = sp.Symbol("n_a", integer=True, nonnegative=True)  # points in the first cluster
n_b = sp.Symbol("n_b", integer=True, nonnegative=True)  # points in the second cluster
d1 = sp.Symbol("d1", real=True)  # mean gap between the first and second law of a Gaussian triple
d2 = sp.Symbol("d2", real=True)  # mean gap between the second and third law
R_pq = sp.Symbol("R_pq", nonnegative=True)  # D_{2 alpha}(P || Q) of a Gaussian triple (weak triangle inequality)
R_batch = sp.Symbol("R_batch", nonnegative=True)  # Theorem 3.6's right-hand side (expected_batch_renyi)
delta_slack = sp.Symbol("delta_slack", positive=True)  # the free slack delta' of Corollary 3.1
p_holder = sp.Symbol("p_holder", positive=True)  # Hölder exponent p of Theorem 3.3 (p > 1)
steps_back = sp.Symbol("steps_back", integer=True, nonnegative=True)  # i: the step n - i, counted from the last
R_qr = sp.Symbol("R_qr", nonnegative=True)  # D_{2 alpha - 1}(Q || R)
runs = sp.Symbol("runs", integer=True, positive=True)  # training runs behind a Monte-Carlo plug-in estimate
outer = sp.Symbol("outer", integer=True, positive=True)  # outer batches of Theorem 3.6's plug-in estimate
inner = sp.Symbol("inner", integer=True, positive=True)  # inner alpha-tuples per outer batch
batches = sp.Symbol("batches", integer=True, positive=True)  # sampled batches behind a plug-in expectation
type1 = sp.Symbol("type1", positive=True)  # a type-I error level x in (0, 1) of the trade-off function f(x)
# multi-step noisy SGD with random batches on a linear model
reg = sp.Symbol("reg", nonnegative=True)  # curvature of the regulariser reg theta^2/2 (0: no contraction)
x_prime = sp.Symbol("x_prime", real=True)  # the differing record's value on D' (x on D)
u_rec = sp.Symbol("u_rec", real=True)  # seed 003's regression target u of the differing record on D
u_prime = sp.Symbol("u_prime", real=True)  # ... and on D'
w_start = sp.Symbol("w_start", real=True)  # a data-independent state before one step
R_holder = sp.Symbol("R_holder", nonnegative=True)  # Theorem 3.3's right-hand side (holder_composition_bound)
f_top = sp.Symbol("f_top", positive=True)  # the larger value R of a two-valued f in {1, R}
f_prob = sp.Symbol("f_prob", positive=True)  # P(f = f_top)
dev = sp.Symbol("dev", positive=True)  # a deviation |E^l f - E f| of an empirical mean
J_conf = sp.Symbol("J_conf", positive=True)  # a failure probability: the claim holds with probability 1 - J_conf
# Feldman et al. 2018, Section 5: tasks and public data
tasks = sp.Symbol("tasks", integer=True, positive=True)  # k independent optimisation tasks on one dataset (Thm 32)
m_pub = sp.Symbol("m_pub", integer=True, positive=True)  # public records placed last (Corollary 31)
first = sp.Symbol("first", integer=True, nonnegative=True)  # first iterate of a uniform average (0: w_0..w_K)
start = sp.Symbol("start", real=True)  # start point as a fraction of the box half-width (w_0 = start * a per axis)
shift = sp.Symbol("shift", integer=True, nonnegative=True)  # step eta_t = 1/(lam (t + shift)), t = 1, 2, ...
weighted = sp.Symbol("weighted", integer=True, nonnegative=True)  # 0: uniform average of x_1..x_T, 1: weights ~ t
# the basic mechanisms (verify/families/basic.py)
eps0 = sp.Symbol("eps0", nonnegative=True)  # a mechanism's own privacy parameter (randomized response, exponential)
scale = sp.Symbol("scale", positive=True)  # scale of Laplace noise: density ~ exp(-|x|/scale)
k = sp.Symbol("k", integer=True, positive=True)  # number of outputs (k-ary randomized response, exponential mechanism)
u0 = sp.Symbol("u0", real=True)  # score lead of one output over the others, in units of the score's sensitivity
drop = sp.Symbol("drop", nonnegative=True)  # how far the other outputs' scores fall on the neighbour (<= 1)
