"""Network-OS platforms: everything one OS knows lives in its own sub-package (``frr``, ...).

``switch_renderer`` is the seam render uses: a platform that renders its switch configuration
itself returns ``(file suffix, render(plan, switch) -> text)``; ``None`` keeps render's own
template path (RGOS, with its hier_config self-check).
"""

from __future__ import annotations

from typing import Callable


def switch_renderer(platform: str) -> tuple[str, Callable[[dict, dict], str]] | None:
    if platform == "frr":
        from zcube_deploy.platforms.frr import render_switch

        return ".conf", lambda plan, sw: render_switch(plan, sw)
    return None
