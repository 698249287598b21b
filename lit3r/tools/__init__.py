"""What the planner can do: pure, typed retrieval and reading functions (no LangGraph here)."""
