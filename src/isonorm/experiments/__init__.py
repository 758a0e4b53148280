"""One subpackage per paper: functions that take the paper's config section and return tidy DataFrames.

Rules call them through thin scripts (scripts/), notebooks never do: they read the Parquet files.
"""
