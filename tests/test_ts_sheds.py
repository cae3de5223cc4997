"""The TypeScript client retries sheds (issue 31): against a real server forced to shed (one
heavy-call worker, no waiting room), clients/ts/test/node_sheds.ts plays three tables of pro bots
at once through the table host's send(): the searches shed (RESOURCE_EXHAUSTED with a
google.rpc.RetryInfo) are retried after their delay within the call's deadline, every move is in
its deal's events once, and a request over a limit (LOG_TOO_LONG) is not retried."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from service_support import ServerProcess
from ts_support import bundle, require_toolchain, run_node

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]


def test_sheds_are_retried_after_their_delay_and_limits_are_not(tmp_path: Path) -> None:
    require_toolchain()
    script = bundle("test/node_sheds.ts", tmp_path)
    server = ServerProcess(tmp_path, "--heavy-workers", "1", "--heavy-waiting", "0", "--no-call-log", metrics=False)
    try:
        proc = run_node(script, str(server.port), timeout=150)
    finally:
        server.stop()
    lines = proc.stdout.strip().splitlines()
    assert lines, f"no summary (exit {proc.returncode}): {proc.stderr}"
    summary: dict[str, Any] = json.loads(lines[-1])
    assert summary["failures"] == [] and summary["ok"] and proc.returncode == 0, (summary, proc.stderr)
    sheds = summary["sheds"]
    assert sheds, "three tables of pro bots on one worker: some searches were shed and retried"
    for shed in sheds:
        assert shed["reason"] == "HEAVY_CALLS_BUSY" and shed["retryDelayMs"] >= 200
        assert shed["waitMs"] >= shed["retryDelayMs"], "never sooner than the RetryInfo's delay"
    limit = summary["limit"]
    assert limit == {"code": "ResourceExhausted", "reason": "LOG_TOO_LONG", "shed": False, "retried": 0}
