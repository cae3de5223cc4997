"""The ``bigtwo`` command (placeholder; the real CLI replaces this module)."""

from __future__ import annotations

import argparse
from importlib.metadata import PackageNotFoundError, version


def _version() -> str:
    try:
        return version("bigtwo")
    except PackageNotFoundError:
        return "unknown"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bigtwo", description="Big Two rules engine and service.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.add_parser("version", help="print the package version")
    sub.add_parser("run", help="run the service (not implemented yet)")
    args = parser.parse_args(argv)
    if args.command == "version":
        print(_version())
    elif args.command == "run":
        print("bigtwo run: not implemented yet")
    else:
        parser.print_help()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
