"""Sphinx configuration of the workbook's report site (built by ``python -m fedlab run``, see ``fedlab.workbook``).

The notebooks arrive executed: myst-nb only renders them (execution mode ``"off"``). ``index`` is the scoreboard
that ``fedlab.workbook.scoreboard_markdown`` fills in from ``scoreboard.md``. MathJax 3 is served from the site itself (copied from the
``django-static-mathjax`` package, which ships MathJax's files and nothing else), never from a CDN, so the pages
render their maths offline.
"""
import shutil
from pathlib import Path

import mathjax

project = "fedlab workbook"
html_title = "fedlab workbook"
extensions = ["myst_nb"]

nb_execution_mode = "off"              # executed by papermill already
nb_merge_streams = True                # consecutive prints of a cell as one block
nb_render_markdown_format = "myst"     # markdown outputs (the claims tables) with tables and maths
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "attrs_inline"]
myst_dmath_double_inline = True        # $$...$$ inside a paragraph is display maths, as in Jupyter
myst_heading_anchors = 2

html_theme = "sphinx_book_theme"
html_theme_options = {"use_download_button": False, "show_toc_level": 2, "footer_content_items": []}
html_context = {"default_mode": "light"}
html_static_path = ["_static"]
html_css_files = ["report.css"]
html_favicon = "_static/favicon.svg"
html_copy_source = False
html_show_sourcelink = False

MATHJAX = Path(mathjax.__file__).parent / "static" / "mathjax" / "es5"
mathjax_path = "mathjax/tex-mml-chtml.js"      # relative to _static/
mathjax3_config = {"tex": {"tags": "ams"}}     # numbered environments as in LaTeX; \tag{...} as written


def copy_mathjax(app) -> None:
    """Copy MathJax's files into the site's ``_static/mathjax`` (before pages are written)."""
    shutil.copytree(MATHJAX, Path(app.outdir) / "_static" / "mathjax", dirs_exist_ok=True)


def setup(app):
    """Sphinx's hook for this configuration: MathJax's files go into the site first."""
    app.connect("builder-inited", copy_mathjax)
