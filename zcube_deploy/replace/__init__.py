"""`zcube replace`: a dead switch swapped for a factory-fresh unit (docs/replace.md): its console bootstrap, then a push
and a verify of that switch alone (run.py); the site's access lines checked before any of them reaches it (access.py)."""
