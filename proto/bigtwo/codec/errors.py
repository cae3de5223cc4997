"""The codec's one exception: a field of a message that holds no valid engine value."""

from __future__ import annotations


class CodecFieldError(ValueError):
    """Field ``path`` (``game.log.ruleset.options["flush"]``) of a message cannot be read: ``reason``
    says why. The service answers it as INVALID_ARGUMENT naming that field (``bigtwo.service.errors``)."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}" if path else reason)
        self.path = path
        self.reason = reason

    def __reduce__(self) -> tuple[type[CodecFieldError], tuple[str, str]]:
        # Raised in a worker process, it comes back pickled: rebuilt from its two fields.
        return (CodecFieldError, (self.path, self.reason))


def quote(value: str, length: int = 40) -> str:
    """``repr(value)``, cut to a prefix of ``length`` characters (marked with an ellipsis): an error
    quotes enough of a bad value to recognise it, never a whole hostile field."""
    if len(value) <= length:
        return repr(value)
    return repr(value[:length]) + f"… ({len(value)} characters)"


__all__ = ["CodecFieldError", "quote"]
