"""`python -m bench`: every benchmark, then bench/RESULTS.md (see bench/run.py)."""

from bench.run import main

main()
