"""lit3r: answers over scientific papers that trace every claim to a passage."""

__version__ = "0.1.0"
