"""Run one benchmark in this process and print its figures as JSON (the last line of stdout).

    python -m bench.part NAME SCALE

Each benchmark runs in its own process so Django's state, the database it points at and the
resident memory of one never leak into the next.
"""

from __future__ import annotations

import importlib
import json
import sys

from bench.common import Figure

MARK = "BENCH-FIGURES "


def main() -> None:
    name, scale = sys.argv[1], sys.argv[2]
    module = importlib.import_module(f"bench.{name}")
    figures: list[Figure] = module.run(scale)
    sys.stdout.flush()
    print(MARK + json.dumps([f.to_json() for f in figures]), flush=True)


if __name__ == "__main__":
    main()
