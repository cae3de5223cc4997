"""Stateless gRPC service for the Big Two rules engine.

It is the ``server`` extra of the distribution (``pip install 'bigtwo[server]'``; the browser port
is the ``web`` extra): without it, importing the package fails at once with that sentence rather than
at whichever module first imports a missing package (the gate is
:func:`bigtwo.engine.installs.require_extra`, the client's too).
"""

from bigtwo.engine.installs import require_extra

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

require_extra(__name__, "server", SERVER_MODULES)
