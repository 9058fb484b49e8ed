"""`zcube drain` / `zcube undrain` (docs/drain.md): ``blast.py`` what an element takes out of service
(pure, from the plan and the analysis), ``run.py`` the steps through push, the records beside the plan."""
