"""Where the shipped data folders are: `grammars/` and `templates/`.

In the repository they are top-level folders; an installed wheel carries them as
`transformer.grammars` and `transformer.templates` (see pyproject.toml). Running from a
checkout (`python -m pytest` in the repo root puts the source tree first on `sys.path`)
finds the top-level folders instead, so both layouts work.
"""

from __future__ import annotations

import importlib.util
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

_REPO_ROOT = Path(__file__).resolve().parent.parent


def _data_dir(package: str, folder: str) -> Traversable:
    local = _REPO_ROOT / folder
    if (local / "__init__.py").is_file() and (_REPO_ROOT / "pyproject.toml").is_file():
        return local
    if importlib.util.find_spec(package) is not None:
        return resources.files(package)
    raise FileNotFoundError(f"cannot find the `{folder}` folder of ascx (is the package installed?)")


def grammars_dir() -> Traversable:
    return _data_dir("transformer.grammars", "grammars")


def templates_dir() -> Traversable:
    return _data_dir("transformer.templates", "templates")
