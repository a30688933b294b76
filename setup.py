"""Package discovery that pyproject.toml alone cannot express: the repository's top-level
`grammars/` and `templates/` folders ship inside the `transformer` package (as
`transformer.grammars` / `transformer.templates`), next to every package found under
`transformer/` and `passes/`. All metadata lives in pyproject.toml."""

from setuptools import find_packages, setup

packages = find_packages(include=["transformer", "transformer.*", "passes", "passes.*"])
packages += ["transformer.grammars", "transformer.templates"]

setup(packages=packages)
