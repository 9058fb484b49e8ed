"""Deprecated name of verify/classify.py (the observed-state check), kept only for cli.py's import
(`from zcube_deploy.verify.compare import compare, summarize`) until the cli/ package imports
verify.classify; delete it then. Design comparison (`zcube compare`) is analysis/designs.py."""

from zcube_deploy.verify.classify import classify as compare
from zcube_deploy.verify.classify import summarize

__all__ = ["compare", "summarize"]
