"""Stateless gRPC service for the Big Two rules engine.

It is the ``server`` extra of the distribution (``pip install 'bigtwo[server]'``; the browser port
is the ``web`` extra): without it, importing the package fails at once with that sentence rather than
at whichever module first imports a missing package.
"""

from importlib.util import find_spec

# The server extra's modules (bigtwo.cli.extras maps each to its extra; tests/test_installs.py checks).
SERVER_MODULES = (
    "grpc",
    "google.protobuf",
    "grpc_status",
    "grpc_health",
    "grpc_reflection",
    "structlog",
    "prometheus_client",
    "uvloop",
    "cryptography",
)


def _missing(modules: tuple[str, ...]) -> str | None:
    for module in modules:
        try:
            if find_spec(module) is None:
                return module
        except ModuleNotFoundError:  # a parent package (google) is missing
            return module
    return None


if (_absent := _missing(SERVER_MODULES)) is not None:
    raise ModuleNotFoundError(
        f"bigtwo.service needs the 'server' extra, which is not installed (no module named '{_absent}'): "
        "pip install 'bigtwo[server]' (in a checkout: pip install -e '.[server]')",
        name=_absent,
    )
