"""ascx: a source-to-source optimiser for Ascend NPU kernels.

The core package: IR, parser, printer, interpreter, analyses, capacity solver, target
tables, lowering, code generation driver, emulator runtime and timing model, CLI.
"""

__version__ = "0.1.0"
