"""Sphinx configuration of the workbook's report site (built by ``python -m fedlab run``, see ``fedlab.workbook``).

The notebooks arrive executed: myst-nb only renders them (execution mode ``"off"``). ``index`` is the scoreboard
that ``fedlab.workbook.scoreboard_markdown`` fills in from ``scoreboard.md``. Every page works offline, nothing is
loaded from a CDN:

- MathJax 3 is served from the site itself (copied from the ``django-static-mathjax`` package, which ships MathJax's
  files and nothing else);
- the claims table of the index sorts, filters and searches with DataTables, from the bundle that the ``itables``
  package ships (``dt_bundle.js``, an ES module, copied as a classic script so that the page also works from
  ``file://``), started by ``_static/claims.js``;
- numbered exercises and their solution drop-downs come from ``sphinx-exercise`` and ``sphinx-togglebutton``, the
  bibliography from ``sphinxcontrib-bibtex`` (``references.bib``, the thesis's labels as keys);
- ``_static/figures.js`` enlarges a figure when it is clicked.
"""
import re
import shutil
from pathlib import Path

import itables
import mathjax
from docutils import nodes
from pybtex.plugin import register_plugin
from pybtex.style.formatting.plain import Style as PlainStyle
from pybtex.style.labels import BaseLabelStyle
from sphinx.transforms.post_transforms import SphinxPostTransform

project = "fedlab workbook"
html_title = "fedlab workbook"
extensions = ["myst_nb", "sphinx_exercise", "sphinx_togglebutton", "sphinxcontrib.bibtex"]

nb_execution_mode = "off"              # executed by papermill already
nb_merge_streams = True                # consecutive prints of a cell as one block
nb_render_markdown_format = "myst"     # markdown outputs (the claims tables) with tables and maths
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "attrs_inline"]
myst_dmath_double_inline = True        # $$...$$ inside a paragraph is display maths, as in Jupyter
myst_heading_anchors = 2
suppress_warnings = ["myst.header"]    # chapters start at level 1 and may skip to level 3 in an exercise

html_theme = "sphinx_book_theme"
html_theme_options = {"use_download_button": True, "show_toc_level": 2, "footer_content_items": []}
html_context = {"default_mode": "light"}
html_static_path = ["_static"]
html_css_files = ["report.css"]
html_js_files = ["figures.js"]
html_favicon = "_static/favicon.svg"
html_copy_source = True                # the download button's .ipynb (replaced by the stored notebook after the build)
html_sourcelink_suffix = ""
html_show_sourcelink = False

MATHJAX = Path(mathjax.__file__).parent / "static" / "mathjax" / "es5"
mathjax_path = "mathjax/tex-mml-chtml.js"      # relative to _static/
mathjax3_config = {"tex": {"tags": "ams"}}     # numbered environments as in LaTeX; \tag{...} as written
DATATABLES = Path(itables.__file__).parent / "html"

exercise_style = "solution_follow_exercise"    # a solution's drop-down says "Solution", under its exercise
togglebutton_hint = "Show"                     # the drop-downs: solutions, and the longer claims tables
togglebutton_hint_hide = "Hide"
bibtex_bibfiles = ["references.bib"]
bibtex_default_style = "workbook"
bibtex_reference_style = "label"


class KeyLabels(BaseLabelStyle):
    """Citation labels are the entries' keys: the thesis's own labels ([McM+17], [Kar+20a])."""

    def format_labels(self, sorted_entries):
        for entry in sorted_entries:
            yield entry.key


class WorkbookStyle(PlainStyle):
    default_label_style = "keys"


register_plugin("pybtex.style.labels", "keys", KeyLabels)
register_plugin("pybtex.style.formatting", "workbook", WorkbookStyle)


class ExerciseNumbers(SphinxPostTransform):
    """``Exercise (5.2 · title)`` → ``Exercise 5.2 · title``: the chapter's own numbering, as in its heading."""

    default_priority = 30      # after sphinx-exercise resolves the titles (20)

    def run(self, **kwargs):
        for node in self.document.findall(nodes.Element):
            if "numbered-exercise" not in node.get("classes", []) or not node.children:
                continue
            title = node.children[0]
            if not isinstance(title, nodes.title) or len(title.children) < 3:
                continue
            first, opening, closing = title.children[0], title.children[1], title.children[-1]
            if opening.astext() == " (" and closing.astext() == ")":
                title.replace(first, nodes.Text(first.astext() + " "))
                title.remove(opening)
                title.remove(closing)


def copy_assets(app) -> None:
    """Copy MathJax and DataTables into the site's ``_static`` (before pages are written); DataTables' ES module
    becomes a classic script that sets ``window.fedlabDataTables`` (so the index also works from ``file://``)."""
    static = Path(app.outdir) / "_static"
    shutil.copytree(MATHJAX, static / "mathjax", dirs_exist_ok=True)
    (static / "datatables").mkdir(parents=True, exist_ok=True)
    bundle = (DATATABLES / "dt_bundle.js").read_text(encoding="utf-8")
    exports = re.search(r"export\s*\{([^}]*)\};?\s*(/\*[\s\S]*\*/\s*)?$", bundle)
    names = dict(reversed(part.strip().split(" as ")) for part in exports.group(1).split(","))
    script = (f"(function () {{\n{bundle[:exports.start()]}\nwindow.fedlabDataTables = {{"
              f"DataTable: {names['default']}, jQuery: {names['jQuery']}}};\n}})();\n"
              + (exports.group(2) or ""))
    (static / "datatables" / "dt_bundle.js").write_text(script, encoding="utf-8")
    shutil.copyfile(DATATABLES / "dt_bundle.css", static / "datatables" / "dt_bundle.css")


def claims_table_files(app, pagename, templatename, context, doctree) -> None:
    """DataTables and ``claims.js`` on the index only (the page with the claims table)."""
    if pagename == "index":
        app.add_css_file("datatables/dt_bundle.css")
        app.add_js_file("datatables/dt_bundle.js")
        app.add_js_file("claims.js")


def no_figure_numbers(app, config) -> None:
    """Sphinx's own figure numbers stay off (sphinx-exercise turns them on): a caption carries its chapter's number
    (``Figure 3.2``), and the exercises theirs."""
    config.numfig = False


def setup(app):
    """Sphinx's hook for this configuration: MathJax's and DataTables' files go into the site first."""
    app.connect("config-inited", no_figure_numbers, priority=900)
    app.connect("builder-inited", copy_assets)
    app.connect("html-page-context", claims_table_files)
    app.add_post_transform(ExerciseNumbers)
