"""Fuzz targets and their runner (tests/fuzz/run.py)."""
