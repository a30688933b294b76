"""`ascx tune`: choose pass sequences and parameters by measured latency (layer 5: may
import passes).

Modules: `space` (the staged, masked search space and canonical kernel keys), `measure`
(the `Measurer` protocol, the emulator measurer, failures as data), `estimate` (the cheap
analytic pre-ranking model), `db` (the SQLite tuning database), `strategies` (random, grid,
tpe, agent), `tuner` (the loop: budget, resume, DB), `explain` (ablation, bounds, pruned
alternatives), `env` (a Gym-style environment), `executors` (serial, process pool, Ray).
See docs/tuning.md.
"""
