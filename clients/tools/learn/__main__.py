"""``python -m bigtwo.tools.learn``: train the ``learned`` level, export its weights, evaluate them.

    python -m bigtwo.tools.learn train --out .tools/learn/run1 --seed 1 --max-minutes 60
    python -m bigtwo.tools.learn train --out .tools/learn/run1 --max-minutes 60   # resumes
    python -m bigtwo.tools.learn distill --out .tools/learn/distill1 --seed 1 --max-minutes 60
    python -m bigtwo.tools.learn export --out .tools/learn/run1
    python -m bigtwo.tools.learn eval --deals 400 [--weights FILE.npz]

``train`` starts a run in ``--out``, or resumes the checkpoint already there (its configuration
wins; only the stopping limits are read from the command line). Progress goes to stderr: deals/s,
loss, and each evaluation point (also kept in ``--out``/curve.json). Uses CUDA when present.
``distill`` starts or resumes a search-distillation run (:mod:`.distill`: the network fitted to
``pro``'s paired candidate values), from the shipped network unless ``--init`` names another.
``export`` (either kind of run) writes the checkpoint's network into the package
(engine/bots/learned_weights.npz; ``--margin`` sets the margin it plays with, default the run's)
with learned_weights.json beside it (command, seed, deals, steps and the curve's last point).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import torch
from bigtwo.engine.bots.learned import MARGIN

from .distill import KIND, DistillConfig, Distiller, initial_weights
from .train import CHECKPOINT, Config, Trainer, evaluate

PACKAGE_WEIGHTS = Path(__file__).resolve().parents[3] / "engine" / "bots" / "learned_weights.npz"


def _train(args: argparse.Namespace) -> int:
    torch.set_num_threads(args.threads)
    out = Path(args.out)
    if (out / CHECKPOINT).is_file():
        trainer = Trainer.resume(out, args.device)
        print(f"resuming {out / CHECKPOINT}: deals {trainer.deals}, steps {trainer.steps}", file=sys.stderr)
    else:
        overrides = _given(
            {
                "seed": args.seed,
                "warm_deals": args.warm_deals,
                "eval_every": args.eval_every,
                "eval_deals": args.eval_deals,
                "checkpoint_every": args.checkpoint_every,
                "rulesets": tuple(args.rulesets.split(",")) if args.rulesets else None,
                "league": _league(args.league) if args.league else None,
            }
        )
        trainer = Trainer(Config(**overrides), out, args.device)
        print(f"new run in {out}: {json.dumps(asdict(trainer.config))}", file=sys.stderr)
    print(f"device {trainer.device}, torch threads {torch.get_num_threads()}", file=sys.stderr)
    minutes = args.max_minutes
    trainer.run(args.max_deals, None if minutes is None else minutes * 60)
    print(f"checkpoint {out / CHECKPOINT}: deals {trainer.deals}, steps {trainer.steps}", file=sys.stderr)
    return 0


def _given(options: dict[str, Any]) -> dict[str, Any]:
    """The options given on the command line (the run's config keeps its defaults for the rest)."""
    return {name: value for name, value in options.items() if value is not None}


def _distill(args: argparse.Namespace) -> int:
    torch.set_num_threads(args.threads)
    out = Path(args.out)
    if (out / CHECKPOINT).is_file():
        distiller = Distiller.resume(out, args.device)
        print(
            f"resuming {out / CHECKPOINT}: deals {distiller.deals}, searches {distiller.searches}, "
            f"steps {distiller.steps}",
            file=sys.stderr,
        )
    else:
        overrides = _given(
            {
                "seed": args.seed,
                "init": args.init,
                "search_odds": args.search_odds,
                "margin": args.margin,
                "shrink": args.shrink,
                "simulations": args.simulations,
                "steps": args.steps,
                "eval_every": args.eval_every,
                "eval_deals": args.eval_deals,
                "checkpoint_every": args.checkpoint_every,
                "rulesets": tuple(args.rulesets.split(",")) if args.rulesets else None,
            }
        )
        config = DistillConfig(**overrides)
        distiller = Distiller(config, out, initial_weights(config.init), args.device)
        print(f"new distillation run in {out}: {json.dumps(asdict(config))}", file=sys.stderr)
    print(f"device {distiller.device}, torch threads {torch.get_num_threads()}", file=sys.stderr)
    minutes = args.max_minutes
    distiller.run(args.max_deals, None if minutes is None else minutes * 60)
    print(
        f"checkpoint {out / CHECKPOINT}: deals {distiller.deals}, searches {distiller.searches}, "
        f"steps {distiller.steps}",
        file=sys.stderr,
    )
    return 0


def _export(args: argparse.Namespace) -> int:
    out = Path(args.out)
    kind = torch.load(out / CHECKPOINT, weights_only=False, map_location="cpu").get("kind")
    run: Trainer | Distiller = Distiller.resume(out, "cpu") if kind == KIND else Trainer.resume(out, "cpu")
    target = Path(args.to)
    arrays: dict[str, Any] = run.playing()
    if args.margin is not None:
        arrays[MARGIN] = np.float32(args.margin)
    temporary = target.with_name(target.name + ".tmp.npz")
    np.savez_compressed(temporary, **arrays)
    os.replace(temporary, target)
    record = {
        "trained_by": run.command() if isinstance(run, Distiller) else _command(run.config, out),
        "config": asdict(run.config),
        "seed": run.config.seed,
        "margin": float(arrays[MARGIN]),
        "deals": run.deals,
        **({"searches": run.searches} if isinstance(run, Distiller) else {}),
        "steps": run.steps,
        "train_minutes": round(run.seconds / 60, 1),
        "curve": run.curve,
        "figures": (
            "curve: learned - opponent, points per deal, seating field under the PPO agent's ruleset, "
            "held-out deals, 95% intervals (docs/BOTS.md)"
        ),
    }
    target.with_suffix(".json").write_text(json.dumps(record, indent=1) + "\n")
    print(
        f"wrote {target} and {target.with_suffix('.json')} (deals {run.deals}, steps {run.steps})",
        file=sys.stderr,
    )
    return 0


def _league(text: str) -> tuple[tuple[str, float], ...]:
    """``learner:0.7,great:0.3`` -> the league's roles and their odds."""
    return tuple((name, float(odds)) for name, odds in (part.split(":") for part in text.split(",")))


def _command(config: Config, out: Path) -> str:
    """The command that starts this run again from its seed (the checkpoint's configuration)."""
    return (
        f"python -m bigtwo.tools.learn train --out {out} --seed {config.seed} --warm-deals {config.warm_deals} "
        f"--eval-every {config.eval_every} --eval-deals {config.eval_deals} "
        f"--checkpoint-every {config.checkpoint_every} --rulesets {','.join(config.rulesets)} "
        f"--league {','.join(f'{name}:{odds}' for name, odds in config.league)}"
    )


def _eval(args: argparse.Namespace) -> int:
    from bigtwo.engine.bots.learned import load_weights

    weights = load_weights(args.weights)
    print(json.dumps(evaluate(weights, args.deals, args.seed, tuple(args.against.split(","))), indent=1))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bigtwo.tools.learn", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    train = sub.add_parser("train", help="start or resume a run")
    train.add_argument("--out", required=True, help="the run's folder (checkpoint.pt, curve.json)")
    train.add_argument("--seed", type=int, default=None)
    train.add_argument("--warm-deals", type=int, default=None)
    train.add_argument("--eval-every", type=int, default=None)
    train.add_argument("--eval-deals", type=int, default=None)
    train.add_argument("--checkpoint-every", type=int, default=None)
    train.add_argument("--rulesets", default=None, help="comma-separated: ppo, classic (default both)")
    train.add_argument(
        "--league", default=None, help="roles and odds, e.g. learner:0.6,great:0.25,good:0.05,snapshot:0.1"
    )
    train.add_argument("--max-minutes", type=float, default=None)
    train.add_argument("--max-deals", type=int, default=None)
    train.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    train.add_argument("--device", default=None, help="cpu or cuda (default: cuda when present)")
    train.set_defaults(run=_train)
    distill = sub.add_parser("distill", help="start or resume a search-distillation run")
    distill.add_argument("--out", required=True, help="the run's folder (checkpoint.pt, curve.json)")
    distill.add_argument("--seed", type=int, default=None)
    distill.add_argument(
        "--init",
        default=None,
        help="the first network: shipped (default), an .npz, or a checkpoint.pt of either trainer",
    )
    distill.add_argument(
        "--search-odds", type=float, default=None, help="share of the recorded seat's decisions searched"
    )
    distill.add_argument("--margin", type=float, default=None, help="the learner's margin (default 0.02)")
    distill.add_argument(
        "--shrink", type=float, default=None, help="standard errors cut off each searched difference (default 1)"
    )
    distill.add_argument("--simulations", type=int, default=None, help="pro's rollouts per search (default 400)")
    distill.add_argument("--steps", type=int, default=None, help="pro's rollout moves per search (default 2000)")
    distill.add_argument("--eval-every", type=int, default=None, help="searches between evaluation points")
    distill.add_argument("--eval-deals", type=int, default=None)
    distill.add_argument("--checkpoint-every", type=int, default=None, help="searches between checkpoints")
    distill.add_argument("--rulesets", default=None, help="comma-separated: ppo, classic (default ppo)")
    distill.add_argument("--max-minutes", type=float, default=None)
    distill.add_argument("--max-deals", type=int, default=None)
    distill.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    distill.add_argument("--device", default=None, help="cpu or cuda (default: cuda when present)")
    distill.set_defaults(run=_distill)
    export = sub.add_parser("export", help="write a run's network into the package")
    export.add_argument("--out", required=True)
    export.add_argument("--to", default=str(PACKAGE_WEIGHTS))
    export.add_argument(
        "--margin", type=float, default=None, help="the margin the level plays with (default: the run's own)"
    )
    export.set_defaults(run=_export)
    ev = sub.add_parser("eval", help="learned against great and the PPO agent on held-out deals")
    ev.add_argument("--weights", default=None, help="an .npz (default: the shipped weights)")
    ev.add_argument("--deals", type=int, default=400)
    ev.add_argument("--seed", type=int, default=4242)
    ev.add_argument("--against", default="great,ppo")
    ev.set_defaults(run=_eval)
    args = parser.parse_args(argv)
    return int(args.run(args))


if __name__ == "__main__":
    raise SystemExit(main())
