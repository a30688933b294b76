"""The emulator's build cache compiles a binary once when several processes need it at the
same time (test workers under xdist, parallel `ascx` runs): the others wait on the cache
entry's lock and take the built binary. A stand-in compiler counts its runs, so the test
needs no C++ compile (fast tier)."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

from transformer.emulator import _cached_build

# writes the file after -o, records the run, and takes long enough for the callers to overlap
FAKE_CXX = """#!{python}
import sys, time
open({log!r}, "a").write("run\\n")
time.sleep(0.5)
out = sys.argv[sys.argv.index("-o") + 1]
open(out, "w").write("binary")
"""


def test_concurrent_requests_for_one_binary_compile_it_once(tmp_path: Path) -> None:
    log = tmp_path / "runs.log"
    cxx = tmp_path / "fake-cxx"
    cxx.write_text(FAKE_CXX.format(python=sys.executable, log=str(log)))
    cxx.chmod(0o755)
    got: list[Path] = []

    def build() -> None:
        got.append(_cached_build([("k.cpp", "int main() {}")], ["-O0"], [], str(cxx), tmp_path / "cache", "k"))

    threads = [threading.Thread(target=build) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 3 and len(set(got)) == 1 and got[0].read_text() == "binary"
    assert log.read_text().count("run") == 1
    # another source is another entry: compiled again
    _cached_build([("k.cpp", "int main() { return 1; }")], ["-O0"], [], str(cxx), tmp_path / "cache", "k")
    assert log.read_text().count("run") == 2
