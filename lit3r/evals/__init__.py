"""Evaluation: datasets, scorers and benchmark drivers."""
