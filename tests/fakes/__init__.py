"""Test doubles shared by the test suite: a scripted chat model and a local OpenAI-compatible HTTP server."""
