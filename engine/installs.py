"""The gate of a package that needs an extra of the distribution (README "Installs").

``pip install bigtwo`` is the engine alone; ``bigtwo.client`` needs the ``client`` extra and
``bigtwo.service`` the ``server`` extra. Each of those packages calls :func:`require_extra` first
thing in its ``__init__``, so that importing it without its extra fails at once with one sentence
naming the extra to install, rather than at whichever of its modules first imports a missing
package (tests/test_installs.py runs both refusals in a virtual environment holding the bare wheel).

Why it lives in the engine: the gate must run before the package imports anything of its extra,
so its home is a package below both that every install holds, and that is the engine. It asks the
import system whether a module could be imported (``importlib.util.find_spec``) and imports
nothing; the rules never call it. Which extra brings which module, for the command's error
messages, is :mod:`bigtwo.cli.extras`.
"""

from __future__ import annotations

from collections.abc import Iterable
from importlib.util import find_spec


def missing_module(modules: Iterable[str]) -> str | None:
    """The first of ``modules`` (dotted names) that cannot be imported here, or None."""
    for module in modules:
        try:
            if find_spec(module) is None:
                return module
        except ModuleNotFoundError:  # a parent package (google) is missing
            return module
    return None


def require_extra(package: str, extra: str, modules: Iterable[str]) -> None:
    """Raise :class:`ModuleNotFoundError` (its ``name`` the missing module) with a sentence naming
    ``extra`` and how to install it, when one of the ``modules`` that ``package`` needs is absent."""
    absent = missing_module(modules)
    if absent is not None:
        raise ModuleNotFoundError(
            f"{package} needs the '{extra}' extra, which is not installed (no module named '{absent}'): "
            f"pip install 'bigtwo[{extra}]' (in a checkout: pip install -e '.[{extra}]')",
            name=absent,
        )


__all__ = ["missing_module", "require_extra"]
