"""Tests of `lit3r serve` (a package, so its conftest does not shadow the top-level one)."""
