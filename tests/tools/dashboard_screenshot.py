"""Render docs/img/prometheus-replica-loss-and-drain.png: Prometheus' own graph page (Debian's
package has no Grafana beside it) showing the dashboard's key queries over a real run, on
127.0.0.1 only:

three aio replicas under load (tests/prometheus_support.py); replica 1 is killed (SIGKILL) a third
of the way in; replica 3 is sent SIGTERM while a stream stays open on it, so it drains (health
NOT_SERVING, new calls UNAVAILABLE) until that stream ends; then the page is shot with headless
Chromium (``make chromium``), cropped and shrunk to a palette PNG (Pillow).

    .venv/bin/python tests/tools/dashboard_screenshot.py [--out PATH] [--seconds 75]

Not a test (it takes a minute and writes into docs/); run it again when the dashboard changes."""

from __future__ import annotations

import argparse
import queue
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

import grpc  # noqa: E402
from bigtwo.v1 import service_pb2 as api  # noqa: E402
from bigtwo.v1 import service_pb2_grpc as rpc  # noqa: E402
from bigtwo.v1 import types_pb2 as pb  # noqa: E402
from prometheus_support import Load, Prometheus, quick_rules  # noqa: E402
from service_support import CODE, ServerProcess  # noqa: E402

WINDOW = "[5s]"
PANELS = (
    ("moves /s by replica", f'sum by (instance) (rate(bigtwo_moves_total{{job="bigtwo"}}{WINDOW}))'),
    ("processes serving by replica (0: draining)", 'sum by (instance) (bigtwo_serving{job="bigtwo"})'),
    ("up by replica (0: not scraped)", 'up{job="bigtwo"}'),
    ("calls /s by status code", f'sum by (code) (rate(bigtwo_rpc_calls_total{{job="bigtwo"}}{WINDOW})) > 0'),
)


def graph_url(base: str, minutes: int) -> str:
    params: dict[str, str] = {}
    for n, (_title, expr) in enumerate(PANELS):
        params |= {f"g{n}.expr": expr, f"g{n}.tab": "0", f"g{n}.range_input": f"{minutes}m", f"g{n}.stacked": "0"}
    return f"{base}/classic/graph?{urllib.parse.urlencode(params)}"


def hold_stream(target: str) -> tuple[grpc.Channel, queue.Queue[object], object]:
    """A stream opened on ``target`` and kept open until None is put on the returned queue (the
    call returned with them must stay referenced: gRPC cancels a call once it is collected)."""
    requests: queue.Queue[object] = queue.Queue()

    def feed():  # type: ignore[no-untyped-def]
        while (item := requests.get()) is not None:
            yield item

    channel = grpc.insecure_channel(target)
    game = pb.Game(log=pb.GameLog(ruleset=pb.Ruleset(preset="classic"), deal_code=CODE))
    requests.put(api.PlayStreamRequest(open=api.StreamOpen(game=game)))
    answers = rpc.BigTwoServiceStub(channel).PlayStream(feed())
    next(answers)
    return channel, requests, answers


def shoot(url: str, out: Path, folder: Path) -> None:
    raw = folder / "raw.png"
    subprocess.run(
        [
            "/usr/bin/chromium",
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            f"--user-data-dir={folder / 'profile'}",
            "--window-size=1000,3400",
            "--virtual-time-budget=8000",
            f"--screenshot={raw}",
            url,
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    from PIL import Image, ImageChops

    image = Image.open(raw).convert("RGB")
    blank = Image.new("RGB", image.size, (255, 255, 255))
    box = ImageChops.difference(image, blank).getbbox()  # the page without the blank below it
    if box is not None:
        image = image.crop((0, 0, image.width, min(image.height, box[3] + 16)))
    image = image.resize((image.width * 2 // 3, image.height * 2 // 3), Image.Resampling.LANCZOS)
    image.quantize(colors=256).save(out, optimize=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img" / "prometheus-replica-loss-and-drain.png")
    parser.add_argument("--seconds", type=float, default=75)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bigtwo-screenshot-") as name:
        folder = Path(name)
        replicas = [ServerProcess(folder, "--grace", "30") for _ in range(3)]
        targets = [f"127.0.0.1:{r.metrics_port}" for r in replicas]
        prometheus = Prometheus(folder, targets, quick_rules(folder / "alerts.yml"))
        load = None
        try:
            prometheus.wait_ready()
            start = time.monotonic()
            load = Load([r.target for r in replicas], seconds=args.seconds)
            channel, held, call = hold_stream(replicas[2].target)
            time.sleep(args.seconds / 3)
            replicas[0].process.kill()  # replica loss
            time.sleep(args.seconds / 4)
            replicas[2].terminate()  # a drain, held open by the stream
            time.sleep(args.seconds / 5)
            held.put(None)  # the stream ends: the drained replica stops
            del call
            channel.close()
            time.sleep(max(0.0, args.seconds - (time.monotonic() - start)))
            load.stop()
            time.sleep(3)
            minutes = int((time.monotonic() - start) // 60) + 1
            args.out.parent.mkdir(parents=True, exist_ok=True)
            shoot(graph_url(prometheus.url, minutes), args.out, folder)
            print(f"{args.out}: {args.out.stat().st_size} bytes; games {load.games}, errors {len(load.errors)}")
            alerts = prometheus.api("alerts")["alerts"]
            print("alerts:", sorted({(alert["labels"]["alertname"], alert["state"]) for alert in alerts}))
        finally:
            if load is not None:
                load.stop()
            prometheus.stop()
            for replica in replicas:
                replica.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
