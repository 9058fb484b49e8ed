"""The config templates' Jinja2 environment: StrictUndefined, no autoescape, trim_blocks, templates from
templates/<platform>/ (a base module: render and the platforms that render their own configs use it)."""

from __future__ import annotations

from functools import lru_cache

import jinja2

from zcube_deploy.resources import data_dir


@lru_cache(maxsize=None)
def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(data_dir("templates"))),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def template(platform: str, name: str) -> jinja2.Template:
    return environment().get_template(f"{platform}/{name}")
