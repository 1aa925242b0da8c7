"""Contrastive training of a sentence model, shared by the trainings that pull a request near what serves it
(a pack's own retriever, `train`; the encoder of imported APIs, `api_encoder`): each (anchor, positive[,
negative]) row against the other rows' positives in its batch (`MultipleNegativesRankingLoss`), on a GPU
where there is one.
"""

from __future__ import annotations

import contextlib
import sys
import tempfile


def fit_contrastive(model, columns: dict[str, list[str]], epochs: int, batch_size: int, learning_rate: float,
                    seed: int) -> None:
    """Train `model` in place on `columns` (`anchor`, `positive`, and an optional hard `negative`). No batch
    holds one text twice, or a row's own positive would count as a negative for another row of the same goal."""
    from datasets import Dataset
    from sentence_transformers import SentenceTransformerTrainer, SentenceTransformerTrainingArguments

    try:  # sentence-transformers >= 6 moved these; older releases have them at the top level
        from sentence_transformers.sentence_transformer import losses
        from sentence_transformers.sentence_transformer.training_args import BatchSamplers
    except ImportError:
        from sentence_transformers import losses
        from sentence_transformers.training_args import BatchSamplers

    loss = losses.MultipleNegativesRankingLoss(model)
    with tempfile.TemporaryDirectory(prefix="nesyplan-contrastive-") as scratch:
        args = SentenceTransformerTrainingArguments(
            output_dir=scratch, num_train_epochs=epochs, per_device_train_batch_size=batch_size,
            learning_rate=learning_rate, warmup_steps=0.1, seed=seed, report_to="none", save_strategy="no",
            logging_strategy="no", batch_sampler=BatchSamplers.NO_DUPLICATES, disable_tqdm=True,
            use_cpu=not cuda())
        with contextlib.redirect_stdout(sys.stderr):  # the trainer prints its log; stdout stays the caller's
            SentenceTransformerTrainer(model=model, args=args, train_dataset=Dataset.from_dict(columns),
                                       loss=loss).train()


def cuda() -> bool:
    import torch

    return torch.cuda.is_available()
