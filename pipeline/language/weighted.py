"""What every learned head is made of: its layers as arrays (x @ w + b, read as float32) and the threshold
`train-language` saved with them.

>>> import numpy as np
>>> head = Weighted({"w_in": np.ones((2, 3), np.float16), "threshold": np.array(0.7), "seed": np.array(0)})
>>> sorted(head.w), head.w["w_in"].dtype.name, head.threshold
(['w_in'], 'float32', 0.7)
"""

from __future__ import annotations

from pathlib import Path

import numpy as np


class Weighted:
    def __init__(self, weights: dict[str, np.ndarray]):
        self.w = {k: v.astype(np.float32) for k, v in weights.items() if k.startswith(("w_", "b_"))}
        self.threshold = float(weights["threshold"]) if "threshold" in weights else 0.5

    @classmethod
    def load(cls, path: Path):
        with np.load(path) as data:
            return cls(dict(data))
