"""The real measurer: emit -> compile (cached) -> profile on the emulator.

`EmulatorMeasurer.measure(kernel, target)`:
1. correctness: when the kernel's tensors are small (<= VERIFY_MAX_ELEMS elements) the
   emitted code is compiled and run once on random inputs against the interpreter before
   the time counts (`verified` True); a tiled kernel is specialised to its sizes, so at
   large sizes the result is timing-only and `verified` stays False;
2. the profile: `transformer.timing.profile.profile_kernel(kernel, target,
   timing_only=True, timeout=..., emitted=<the same emission>)`, compile cached by
   content hash (the verification run and the profile share one binary when the flags
   agree);
3. any failure (compile error, emulator error, hazard, mismatch, timeout) becomes a
   `Measurement.failure` with its reason.
"""

from __future__ import annotations

import math
import subprocess
import time
from dataclasses import dataclass

from .. import ir
from .measure import TIMEOUT, Measurement
from ..targets import Target

VERIFY_MAX_ELEMS = 1 << 16  # verify by running the emitted code when tensors are this small


@dataclass(frozen=True)
class EmulatorMeasurer:
    name: str = "emulator"
    timeout: float = 120.0

    @property
    def version(self) -> str:
        from .. import __version__

        try:
            from ..timing.params import MODEL_VERSION
        except ImportError:
            MODEL_VERSION = "?"
        return f"{MODEL_VERSION}/{__version__}"

    def measure(self, kernel: ir.Kernel, target: Target) -> Measurement:
        from ..diagnostics import AscxError, ResourceError
        from ..timing.profile import profile_kernel

        t0 = time.perf_counter()
        t_run: float | None = None  # when the profiled run started
        elems = max((_elems(t, kernel) for t in (*kernel.inputs, *kernel.outputs)), default=0)
        verified = False
        try:
            from ..codegen import emit_ascendc

            em = emit_ascendc(kernel, target)
            if elems <= VERIFY_MAX_ELEMS:
                from ..codegen import verify_emitted

                # at the profile's -O1 (not verify's default -O0), so both runs share one binary:
                # one compile per candidate instead of two
                diffs = verify_emitted(kernel, target, trials=1, seed=0, emitted=em, optimize="-O1")
                bad = [d for d in diffs if not d.ok]
                if bad:
                    return Measurement.failure(f"mismatch: output `{bad[0].name}` differs from the interpreter",
                                               backend=self.name, wall_s=time.perf_counter() - t0)
                verified = True
            t_run = time.perf_counter()
            p = profile_kernel(kernel, target, timing_only=True, timeout=self.timeout, emitted=em)
        except ResourceError as e:
            # the profile's time limit (`self.timeout`) is a ResourceError too: one raised after
            # the run took the whole limit is that limit, a transient failure
            timed_out = t_run is not None and time.perf_counter() - t_run >= self.timeout
            why = f"{TIMEOUT}: over {self.timeout:g} s: " if timed_out else ""
            return Measurement.failure(why + _first_line(str(e)), backend=self.name, wall_s=time.perf_counter() - t0)
        except AscxError as e:
            return Measurement.failure(_first_line(str(e)), backend=self.name, wall_s=time.perf_counter() - t0)
        except (TimeoutError, subprocess.TimeoutExpired) as e:  # the emulator run exceeded `self.timeout`
            return Measurement.failure(f"{TIMEOUT}: over {self.timeout:g} s: {_first_line(str(e))}", backend=self.name,
                                       wall_s=time.perf_counter() - t0)
        except Exception as e:  # subprocess errors and the like: recorded, never raised
            return Measurement.failure(f"{type(e).__name__}: {_first_line(str(e))}", backend=self.name,
                                       wall_s=time.perf_counter() - t0)
        return Measurement.from_profile(p, verified=verified, wall_s=time.perf_counter() - t0)


def _elems(t: ir.TensorDecl, kernel: ir.Kernel) -> int:
    from ..affine import eval_int

    sizes = kernel.size_values()
    try:
        return math.prod(eval_int(d, sizes) for d in t.shape)
    except Exception:
        return 0


def _first_line(msg: str) -> str:
    return (msg.strip().splitlines() or ["error"])[0][:300]
