"""Lowering of a transformed kernel to a `KernelPlan` (see `plan.py`, `lower.py`)."""

from .lower import LoweringError, NoRuntimeLowering, lower_kernel
from .plan import Buffer, GmParam, KernelPlan, Line, Method, NestChoice, Phase

__all__ = ["Buffer", "GmParam", "KernelPlan", "Line", "LoweringError", "Method", "NoRuntimeLowering", "NestChoice", "Phase", "lower_kernel"]
