"""bench/bench_samples.py (issue 26): how it reads a public sample folder without building it:
which folders are samples, the steps and arguments its run.sh names, the chip definitions of
its CMakeLists, the status a run gets, and the doc table rewritten alone."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

RUN_SH = """#!/bin/bash
SOC_VERSION="Ascend310P3"
RUN_MODE_LIST="cpu sim npu"
python3 scripts/gen_data.py --n 64
if [ "${RUN_MODE}" = "cpu" ]; then
    ./ascendc_kernels_bbit 8 \\
        16
fi
python3 scripts/verify_result.py output/output_z.bin output/golden.bin
"""

CMAKE = """set(CUSTOM_ASCEND310P_LIST "Ascend310P1" "Ascend310P3")
target_compile_definitions(x PRIVATE
    $<$<BOOL:$<IN_LIST:${SOC_VERSION},${CUSTOM_ASCEND310P_LIST}>>:CUSTOM_ASCEND310P>
    SOC_VERSION="${SOC_VERSION}"
)
"""


def _bench():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("bench_samples", ROOT / "bench" / "bench_samples.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["bench_samples"] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def _sample(root: Path, run_sh: str = RUN_SH) -> Path:
    root.mkdir(parents=True)
    (root / "run.sh").write_text(run_sh)
    (root / "CMakeLists.txt").write_text(CMAKE)
    (root / "main.cpp").write_text("int32_t main(int32_t argc, char* argv[]) { return 0; }\n")
    (root / "add_custom.cpp").write_text('extern "C" __global__ __aicore__ void add_custom() {}\n')
    return root


def test_finds_kernel_launch_folders_and_op_projects(tmp_path):
    b = _bench()
    launch = _sample(tmp_path / "0_introduction" / "3_add" / "AddNeo")
    (tmp_path / "0_introduction" / "3_add" / "scripts").mkdir()   # not a sample
    op = tmp_path / "1_add_frameworklaunch" / "AddCustom"
    (op / "op_host").mkdir(parents=True)
    (op / "op_kernel").mkdir()
    (op / "op_host" / "add_custom.cpp").write_text("// host\n")
    (op / "op_kernel" / "add_custom.cpp").write_text("// kernel\n")
    lone = tmp_path / "lone"  # a run.sh with no host program next to it
    lone.mkdir()
    (lone / "run.sh").write_text(RUN_SH)
    assert b.find_samples(tmp_path) == sorted([launch, op])


def test_reads_the_steps_and_arguments_of_run_sh():
    b = _bench()
    assert b._python_step(RUN_SH, "gen_data.py") == ["scripts/gen_data.py", "--n", "64"]
    assert b._python_step(RUN_SH, "verify_result.py") == ["scripts/verify_result.py", "output/output_z.bin", "output/golden.bin"]
    assert b._python_step(RUN_SH, "other.py") is None
    assert b._binary_args(RUN_SH) == ["8", "16"]  # continuation lines joined
    assert b._soc_default(RUN_SH) == "Ascend310P3"
    assert b._has_cpu_mode(RUN_SH)
    assert not b._has_cpu_mode(RUN_SH.replace("cpu sim npu", "sim npu").replace('"cpu"', '"sim"'))
    assert b._binary_args("        ./ascendc_kernels_bbit 3 | tee $file_path\n") == ["3"]  # up to the pipe


def test_an_npu_host_through_aclrtlaunch_runs_and_a_chevron_launch_does_not(tmp_path):
    b = _bench()
    acl = _sample(tmp_path / "acl")
    (acl / "main.cpp").write_text('#include "aclrtlaunch_add_custom.h"\nint32_t main() { ACLRT_LAUNCH_KERNEL(add_custom)(8, nullptr); }\n')
    assert b._acl_host(acl)
    chevron = _sample(tmp_path / "chevron")
    (chevron / "add_custom.cpp").write_text("void do_add(void* s) { add_custom<<<8, nullptr, s>>>(); }\n")
    assert not b._acl_host(chevron)


def test_chip_definitions_follow_the_cmake_lists(tmp_path):
    b = _bench()
    folder = _sample(tmp_path / "s")
    assert b._cmake_defines(folder, "Ascend910B1") == ['-DSOC_VERSION="Ascend910B1"']
    assert b._cmake_defines(folder, "Ascend310P3") == ['-DSOC_VERSION="Ascend310P3"', "-DCUSTOM_ASCEND310P"]
    (folder / "CMakeLists.txt").write_text("project(x)\n")
    assert b._cmake_defines(folder, "Ascend910B1") == []


def test_the_chip_sizes_the_memories_and_the_kernel_mode_from_the_target_table():
    from transformer.targets import get_target

    b = _bench()
    p310 = b._chip_build("Ascend310P3")
    assert p310["scope_bytes"]["UB"] == get_target("ascend310p").scope("ub").physical_bytes == 256 * 1024
    assert p310["infer_kernel_mode"] is False  # coupled: one kind of core
    b910 = b._chip_build("Ascend910B1")
    assert b910["scope_bytes"]["UB"] == get_target("ascend910b1").scope("ub").physical_bytes
    assert b910["infer_kernel_mode"] is True
    assert b._chip_build("Ascend310B1") == {}  # not in the table: the default build


def test_a_sample_without_cpu_mode_is_reported_without_building(tmp_path):
    b = _bench()
    folder = _sample(tmp_path / "hello", RUN_SH.replace("cpu sim npu", "npu").replace('"cpu"', '"npu"'))
    o = b.run_sample(folder, tmp_path, timeout=10)
    assert (o.compiled, o.ran, o.matched, o.status) == (False, False, False, "no cpu mode")


def test_statuses_and_the_doc_table(tmp_path, monkeypatch):
    b = _bench()
    rows = [b.Outcome("a", "kernel-launch", True, True, True),
            b.Outcome("b", "kernel-launch", True, True, False, "verify: error ratio: 0.5"),
            b.Outcome("c", "kernel-launch", True, False, False, "exit 3: x | y"),
            b.Outcome("d", "kernel-launch", False, False, False, "k.cpp:1:1: error: z"),
            b.Outcome("e", "op-project", True)]
    assert [o.status for o in rows] == ["pass", "mismatch", "run failed", "compile failed", "compiled (not run)"]
    text = b.table(rows)
    assert "| c | kernel-launch | run failed | exit 3: x \\| y |" in text
    assert text.endswith("1 of 4 kernel-launch samples compile, run and match unchanged; 4 of 5 folders compile.")
    doc = tmp_path / "emulator.md"
    doc.write_text(f"before\n{b.BEGIN}\nold table\n{b.END}\nafter\n")
    monkeypatch.setattr(b, "DOC", doc)
    b.write_doc(text)
    assert doc.read_text() == f"before\n{b.BEGIN}\n{text}\n{b.END}\nafter\n"
