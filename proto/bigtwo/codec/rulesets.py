"""Rulesets: ``bigtwo.v1.Ruleset`` <-> :class:`~bigtwo.engine.Ruleset`, one reading and one writing
for the service, the client, the replay tools and the vectors judge.

The message means what ``types.proto`` says: a preset (empty is classic) and the options that
override it, each written as the engine's option text (a list such as an explicit straights ladder
is its items joined by commas). So :func:`ruleset_to_pb` writes only the overrides, the smallest
message of the ruleset; ``every_option=True`` lists every option instead, for the answers that
promise the ruleset in full (DescribeRuleset, ListPresets). Both read back to the same ruleset.

:func:`ruleset_from_pb` is strict: an unknown preset, an option named ``preset`` (the preset has
its own field), an unknown option or value is a :class:`~bigtwo.codec.errors.CodecFieldError`
naming the field (``ruleset.preset``, ``ruleset.options["flush"]``). A server passes its
:class:`OptionBounds` so that sizes are checked before anything is parsed.
"""

from __future__ import annotations

from dataclasses import dataclass

from bigtwo.engine import PRESET_NAMES, Ruleset
from bigtwo.engine.cache import BoundedCache
from bigtwo.v1 import types_pb2 as pb

from .errors import CodecFieldError, quote

_Key = tuple[str, tuple[tuple[str, str], ...]]
_RULESETS: BoundedCache[_Key, Ruleset] = BoundedCache("codec.rulesets", 1024)
"""Rulesets by preset and sorted options: a request that carries its log names its ruleset every
time, and parsing the options (ladders of rungs) costs more than the lookup."""


@dataclass(frozen=True, slots=True)
class OptionBounds:
    """The most options, and the longest option name and value, that a reader accepts."""

    options: int
    name: int
    value: int


def option_text(value: object) -> str:
    """An option's value (as :meth:`Ruleset.to_mapping` gives it) as the message's text."""
    if isinstance(value, (list, tuple)):
        return ",".join(str(item) for item in value)
    return str(value)


def ruleset_to_pb(ruleset: Ruleset, *, every_option: bool = False) -> pb.Ruleset:
    """The preset and the options overriding it (``every_option``: every option, whatever its value)."""
    if every_option:
        data = ruleset.to_mapping()
        del data["preset"]
    else:
        data = ruleset.overrides()
    return pb.Ruleset(preset=ruleset.preset, options={key: option_text(value) for key, value in data.items()})


def ruleset_from_pb(message: pb.Ruleset, path: str = "ruleset", bounds: OptionBounds | None = None) -> Ruleset:
    """The ruleset of ``message``; a field that holds no valid rule raises :class:`CodecFieldError`
    naming it under ``path``."""
    options = message.options
    if bounds is not None and len(options) > bounds.options:
        raise CodecFieldError(f"{path}.options", f"at most {bounds.options} options")
    preset_name = message.preset or "classic"
    if preset_name not in PRESET_NAMES:
        raise CodecFieldError(
            f"{path}.preset", f"unknown preset {quote(preset_name)}; valid presets: {', '.join(PRESET_NAMES)}"
        )
    for key, value in options.items():
        if bounds is not None and (len(key) > bounds.name or len(value) > bounds.value):
            raise CodecFieldError(
                f"{path}.options",
                f"option {quote(key)}: names have at most {bounds.name} characters, values at most {bounds.value}",
            )
        if key.replace("-", "_") == "preset":
            raise CodecFieldError(f"{path}.options", "set the preset in the preset field, not as an option")
    items = tuple(sorted(options.items()))
    ruleset = _RULESETS.get((preset_name, items))
    if ruleset is not None:
        return ruleset
    try:
        ruleset = Ruleset.from_mapping({**dict(items), "preset": preset_name})
    except ValueError as exc:
        option = getattr(exc, "option", "")
        where = f'{path}.options["{option}"]' if option and option in options else f"{path}.options"
        raise CodecFieldError(where, str(exc)) from None
    return _RULESETS.put((preset_name, items), ruleset)


__all__ = ["OptionBounds", "option_text", "ruleset_from_pb", "ruleset_to_pb"]
