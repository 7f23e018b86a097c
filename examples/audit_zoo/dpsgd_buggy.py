# dpsgd_buggy.py: DP-SGD on a linear model, claimed (q=1, sigma=4, 4 steps), with one bug
import numpy as np

Q, SIGMA, STEPS, CLIP, LR = 1.0, 4.0, 4, 2.0, 0.5
claim = (Q, SIGMA, STEPS)
dataset = np.column_stack([np.linspace(-3.0, 3.0, 15), np.zeros(15)])
canary = np.array([0.0, 50.0])  # a record whose gradient points where no other record's does


def dp_sgd(data, rng, runs, noise_std):
    grads = -data  # the gradient of the loss -<theta, x>
    norms = np.linalg.norm(grads, axis=1, keepdims=True)
    grads = grads * np.minimum(1.0, CLIP / norms.clip(1e-12))  # clip each record's gradient to CLIP
    theta = np.zeros((runs, data.shape[1]))  # `runs` independent trainings at once
    for _ in range(STEPS):
        noisy = grads.sum(axis=0) + rng.normal(0.0, noise_std, size=theta.shape)
        theta -= LR * noisy / 16
    return theta


def train(data, rng, runs=1):
    return dp_sgd(data, rng, runs, noise_std=SIGMA)  # the bug: the noise multiplier used as the std
