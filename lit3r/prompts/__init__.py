"""Prompt templates as module constants."""
