"""Where measurements run: in the driver, in a process pool (`--jobs J`), or as Ray tasks
on an existing cluster (`--executor ray`, `pip install ascx[ray]`).

All three expose `submit(measurer, kernel, target) -> concurrent.futures.Future` of a
`Measurement`; the driver alone writes the DB as futures complete. A worker that dies
(or a task that raises) becomes a recorded failure, never a stopped search.

A pool worker never outlives its driver: each worker leads its own process group (its
compiler and emulator subprocesses join it) and a watchdog thread kills that group as
soon as the driver is gone (`kill -9` of `ascx tune --jobs 2` leaves no orphans).
"""

from __future__ import annotations

import concurrent.futures as cf
import os
import signal
import threading
import time
from typing import Any

from .measure import Measurement
from ..targets import Target


def _run(measurer: Any, kernel: Any, target: Target) -> Measurement:
    t0 = time.perf_counter()
    try:
        return measurer.measure(kernel, target)
    except Exception as e:  # a measurer bug: recorded, not raised
        return Measurement.failure(f"measurer error: {type(e).__name__}: {e}", backend=getattr(measurer, "name", ""),
                                   wall_s=time.perf_counter() - t0)


class SerialExecutor:
    """Runs each measurement in the driver, at submit time."""

    name = "serial"
    jobs = 1

    def submit(self, measurer: Any, kernel: Any, target: Target) -> "cf.Future[Measurement]":
        f: cf.Future[Measurement] = cf.Future()
        f.set_result(_run(measurer, kernel, target))
        return f

    def close(self) -> None:
        pass


WATCH_S = 0.5  # how often a pool worker checks that its driver is alive


def _watch_driver(driver: int) -> None:
    """Pool worker initializer: lead a process group, and kill it when the driver dies."""
    os.setpgrp()

    def watch() -> None:
        while os.getppid() == driver:
            time.sleep(WATCH_S)
        os.killpg(os.getpgrp(), signal.SIGKILL)  # this worker and its subprocesses

    threading.Thread(target=watch, daemon=True).start()


class PoolExecutor:
    """A process pool of `jobs` workers (fork-free `spawn` is not needed: workers only
    run measurers, which start their own compiler and emulator subprocesses)."""

    name = "local"

    def __init__(self, jobs: int) -> None:
        self.jobs = jobs
        self.pool = self._pool()

    def _pool(self) -> cf.ProcessPoolExecutor:
        return cf.ProcessPoolExecutor(max_workers=self.jobs, initializer=_watch_driver, initargs=(os.getpid(),))

    def submit(self, measurer: Any, kernel: Any, target: Target) -> "cf.Future[Measurement]":
        try:
            return self.pool.submit(_run, measurer, kernel, target)
        except cf.process.BrokenProcessPool:
            self.pool = self._pool()
            return self.pool.submit(_run, measurer, kernel, target)

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


class RayExecutor:
    """Ray tasks on the cluster `ray.init(address=...)` connects to (`RAY_ADDRESS`, else a
    local instance); `jobs` bounds the tasks in flight."""

    name = "ray"

    def __init__(self, jobs: int, address: str | None = None) -> None:
        try:
            import ray
        except ImportError as e:
            raise ImportError("--executor ray needs ray: pip install 'ascx[ray]'") from e
        self.ray = ray
        if not ray.is_initialized():
            ray.init(address=address, include_dashboard=False, log_to_driver=False,
                     ignore_reinit_error=True, num_cpus=None if address else max(1, jobs))
        self.jobs = jobs
        self._task = ray.remote(_run)

    def submit(self, measurer: Any, kernel: Any, target: Target) -> "cf.Future[Measurement]":
        return self._task.remote(measurer, kernel, target).future()

    def close(self) -> None:
        pass


def make_executor(kind: str, jobs: int) -> Any:
    if kind == "ray":
        return RayExecutor(jobs)
    if kind != "local":
        raise ValueError(f"unknown executor `{kind}` (local, ray)")
    return SerialExecutor() if jobs <= 1 else PoolExecutor(jobs)


def result_of(f: "cf.Future[Measurement]") -> Measurement:
    """The measurement of a completed future; a crashed worker is a failure."""
    try:
        return f.result()
    except Exception as e:
        return Measurement.failure(f"worker failed: {type(e).__name__}: {e}")
