"""The gRPC service config the project publishes for stock clients: one file,
``bigtwo/service/service_config.json``, shipped in the package and read from there (docs/API.md
shows it loaded by Python, Go and Node clients).

Its retry policy retries ``UNAVAILABLE`` (a replica draining or gone: every call is a pure function
of its request and a move carries its index, so sending one again never applies it twice) and
``RESOURCE_EXHAUSTED``, which the service answers two ways (:mod:`bigtwo.service.errors`): a shed
(refused for load) carries gRPC's retry pushback with the delay to wait, and a request over a limit
carries a pushback of ``-1``, which tells a gRPC client not to retry it at all (gRPC's A6 retry
design). The cap on calls in flight (``--max-concurrent-rpcs``) is a shed too
(:mod:`bigtwo.service.admission`); only gRPC's own limit, a backstop far above it, refuses without
a pushback: those are retried with the policy's backoff.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import TypedDict

FILE = "service_config.json"


def service_config_text() -> str:
    """The service config's JSON text, as a channel option takes it (``grpc.service_config``)."""
    return (resources.files("bigtwo.service") / FILE).read_text(encoding="utf-8")


class RetryPolicy(TypedDict):
    """gRPC's retry policy fields (gRPC A6), as the file writes them."""

    maxAttempts: int
    initialBackoff: str
    maxBackoff: str
    backoffMultiplier: float
    retryableStatusCodes: list[str]


def retry_policy() -> RetryPolicy:
    """The retry policy of the service's methods, as a dictionary."""
    policy: RetryPolicy = json.loads(service_config_text())["methodConfig"][0]["retryPolicy"]
    return policy


__all__ = ["FILE", "RetryPolicy", "retry_policy", "service_config_text"]
