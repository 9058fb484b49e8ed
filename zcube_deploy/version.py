"""The tool's version (a base module: plan.json records it, the CLI prints it; pyproject.toml reads it here)."""

__version__ = "0.1.0"
