"""File input and output for every part of npuweave.

* ``atomic``: atomic writes (temporary file beside the target, then rename), output-path checks;
* ``userfiles``: bounded reading of user text files and safe YAML;
* ``formats``: strict JSON, one CSV convention, Parquet, with ``-`` as stdout and ``.gz`` as gzip.

Every file npuweave writes goes through here, so an interrupted run never leaves a half-written
output behind.
"""

from __future__ import annotations

from npuweave.fileio.atomic import (
    FIGURE_SUFFIXES,
    STDOUT,
    atomic_open,
    check_output_dir,
    check_output_path,
    check_outputs,
    file_kind,
    remove_stale_temps,
    save_figure,
    write_bytes,
    write_text,
)
from npuweave.fileio.formats import (
    check_parquet,
    csv_text,
    json_safe,
    json_text,
    write_csv,
    write_json,
    write_parquet,
)
from npuweave.fileio.userfiles import (
    MAX_INPUT_BYTES,
    YAML_MAX_DEPTH,
    YAML_MAX_NODES,
    load_json,
    load_yaml,
    read_user_text,
)

__all__ = [
    "FIGURE_SUFFIXES",
    "MAX_INPUT_BYTES",
    "STDOUT",
    "YAML_MAX_DEPTH",
    "YAML_MAX_NODES",
    "atomic_open",
    "check_output_dir",
    "check_output_path",
    "check_outputs",
    "check_parquet",
    "csv_text",
    "file_kind",
    "json_safe",
    "json_text",
    "load_json",
    "load_yaml",
    "read_user_text",
    "remove_stale_temps",
    "save_figure",
    "write_bytes",
    "write_csv",
    "write_json",
    "write_parquet",
    "write_text",
]
