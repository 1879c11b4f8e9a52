"""Installed packages, found as folders of source files: `import timm`,
`from transformers.models.bert.modeling_bert import BertModel`.

Nothing is imported to find them (`importlib.util.find_spec` on a dotted name imports
its parents): the top-level folder (or `name.py`) is looked for in the package roots
the caller gives (an unpacked wheel), then in the site-packages folders of this
Python.  The standard library is not searched (its modules the parser needs are
modelled in `stdlib.py`), and neither are the libraries the parser models
(`torch`, `numpy`, `einops` ...): their calls are answered by the model, not by
their source.  Files are read lazily, as the interpreter reaches them.
"""

from __future__ import annotations

import os
import site
import sys

# libraries whose call surface the parser models: their own source is never read (torchvision is not
# one: its models are plain Python, read from source where it is installed)
MODELLED = frozenset({
    "torch", "torchaudio", "functorch", "numpy", "einops", "pytorch_lightning", "lightning",
    "typing_extensions", "scipy", "triton",
})


def default_roots() -> list[str]:
    """This Python's site-packages folders, in the order Python searches them."""
    roots = []
    try:
        roots += site.getsitepackages()
    except AttributeError:  # some embedded Pythons lack it
        pass
    try:
        roots.append(site.getusersitepackages())
    except AttributeError:
        pass
    roots += [p for p in sys.path if os.path.basename(p) in ("site-packages", "dist-packages")]
    out = []
    for r in roots:
        r = os.path.abspath(r)
        if r not in out and os.path.isdir(r):
            out.append(r)
    return out


class PackageFinder:
    """Where the source of an installed top-level package lives."""

    def __init__(self, roots=(), site_packages=True):
        self.roots = [os.path.abspath(str(r)) for r in roots]
        if site_packages:
            self.roots += [r for r in default_roots() if r not in self.roots]
        self._tops = {}

    def top(self, name):
        """The folder holding package `name` (or `name.py`), or None."""
        if name in MODELLED or not name.isidentifier():
            return None
        if name in self._tops:
            return self._tops[name]
        found = None
        for r in self.roots:
            if os.path.isfile(os.path.join(r, name, "__init__.py")) or os.path.isfile(os.path.join(r, name + ".py")):
                found = r
                break
        self._tops[name] = found
        return found

    def find(self, parts):
        """The file of dotted module `parts` (['timm', 'layers']) in an installed package, or None."""
        if not parts:
            return None
        root = self.top(parts[0])
        if root is None:
            return None
        p = os.path.join(root, *parts)
        if os.path.isfile(p + ".py"):
            return p + ".py"
        if os.path.isfile(os.path.join(p, "__init__.py")):
            return os.path.join(p, "__init__.py")
        return None
