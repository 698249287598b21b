"""Grounding: split an answer into claims and judge each against the text of the chunks it cites."""
