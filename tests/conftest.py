import os

from hypothesis import settings

os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
# tables are drawn 160 columns wide whatever the terminal (or xdist worker) says, so tests that
# read a table's cells do not depend on where they run
os.environ["COLUMNS"] = "160"
# captured output is not a terminal, whatever the CI service asks for: FORCE_COLOR=1 (set by
# many CI setups for coloured logs) or TTY_COMPATIBLE=1 made rich draw spinners and colour codes
# into the stdout/stderr tests read (and subprocesses inherit this environment)
for _name in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE"):
    os.environ.pop(_name, None)

# Hypothesis: no per-example deadline. Its default (200 ms, one slow example fails the test as
# "Flaky"/DeadlineExceeded) is a wall-time assertion: a host that pauses the worker for 0.4 s
# fails a test that costs microseconds. The too_slow health check scales with it (5 x the
# deadline, at least 1 s, of drawing; 30 s without one). print_blob: a CI failure prints the
# line that replays it.
# Tests that set their own settings still inherit these unless they say otherwise. The parent
# is the profile hypothesis chose (its "ci" one, derandomized, where it detects a CI service).
settings.register_profile("npuweave", parent=settings.default, deadline=None, print_blob=True)
settings.load_profile(os.environ.get("NPUWEAVE_HYPOTHESIS_PROFILE", "npuweave"))
