"""Every stage of this file would leave a marker if it ever ran.  The parser must not run it."""
import os
import subprocess

MARKER = os.environ.get("ARCHCURATOR_TEST_MARKER", "/tmp/archcurator-parse-marker")
open(MARKER, "w").write("imported")
os.system("touch " + MARKER + ".system")

import torch.nn as nn  # noqa: E402


def _boom(tag):
    with open(MARKER + "." + tag, "w") as f:
        f.write(tag)
    os.system("touch " + MARKER + ".system-" + tag)
    subprocess.run(["touch", MARKER + ".subprocess-" + tag])
    __import__("os").system("touch " + MARKER + ".dunder-" + tag)
    exec("open('" + MARKER + ".exec-" + tag + "', 'w').write('x')")
    eval("__import__('os').system('touch " + MARKER + ".eval-" + tag + "')")
    return 4


class Evil(nn.Module):
    size = _boom("classbody")

    def __init__(self):
        super().__init__()
        width = _boom("init")
        self.fc = nn.Linear(width, 2)
        getattr(os, "system")("touch " + MARKER + ".getattr")

    def forward(self, x):
        _boom("forward")
        open(MARKER + ".forward-open", "w").close()
        return self.fc(x)
