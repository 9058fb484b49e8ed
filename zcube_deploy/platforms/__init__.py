"""Network-OS platforms: everything one OS knows lives in its own sub-package (``frr``, ...)."""
