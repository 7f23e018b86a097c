"""The evaluation pipeline: how a point's truth and bound are obtained once the checker has resolved the point.

One truth request goes through these modules, in this order, once:

1. `memo` (`truth_of`): the run-wide memo of truths (a truth is a deterministic function of family, quantity and
   validated parameters); a miss goes on to
2. `truth_cache` (`lookup`, `store`): the on-disk cache of a run started with `--cache DIR` (diskcache, size-capped,
   least recently used evicted); a miss goes on to
3. `isolation` (`truth`): a built-in family's truth in-process (verify's own code, under the checker's
   `verify.limits.deadline`), a plugin family's in a worker process that its deadline or memory cap ends (Pebble);
4. `Family.truth_validated` (verify.model): the family's truth function, then the contract check `checked_truth`
   (a Truth whose interval meets the quantity's range).

Beside the truth, `bound_arrays` gives the floats of a bound over a whole grid at once, and `rigorous` re-checks a
point the float filter cannot decide with Arb enclosures of both sides (the certificate).
"""
