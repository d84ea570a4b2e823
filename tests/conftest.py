import os

os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
# tables are drawn 160 columns wide whatever the terminal (or xdist worker) says, so tests that
# read a table's cells do not depend on where they run
os.environ["COLUMNS"] = "160"
