"""Global-pooling CNN for 20 Newsgroups (Mukhoti et al. 2020, ``NewsGroup/ng_model.py``).

Word embeddings (100-d GloVe in the papers; see :mod:`replicate.data.embeddings` for
the offline word2vec substitute) -> three Conv1d(k=5, 128 channels) + ReLU, with
MaxPool1d(5, stride 1) after the first two, global max pooling over time,
Linear(128, 128) + ReLU + dropout (keep probability 0.7 in the reference training
script), Linear(128, K). The reference keeps the embedding in a separate module that
the optimiser never sees, so its GloVe vectors stay frozen: pre-trained ``embedding``
weights are frozen here too unless ``freeze_embedding=False``; without them the
embedding is learned from scratch.
"""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F


class TextCNN(nn.Module):
    """Embedding + 3 x (Conv1d k5) with max pools, global max pool, FC-ReLU-dropout, ``fc``."""

    def __init__(self, vocab_size: int, num_classes: int = 20, embed_dim: int = 100,
                 channels: int = 128, kernel_size: int = 5, hidden: int = 128,
                 dropout: float = 0.3, embedding=None,
                 freeze_embedding: bool | None = None, padding_idx: int | None = 0):
        super().__init__()
        if not isinstance(vocab_size, int) or vocab_size < 2:
            raise ValueError(f"vocab_size must be an int >= 2, got {vocab_size!r}")
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {dropout!r}")
        self.embedding = nn.Embedding(vocab_size, embed_dim, padding_idx=padding_idx)
        if freeze_embedding is None:
            freeze_embedding = embedding is not None
        if embedding is not None:
            embedding = torch.as_tensor(embedding, dtype=torch.float32)
            if tuple(embedding.shape) != (vocab_size, embed_dim):
                raise ValueError(f"embedding must have shape {(vocab_size, embed_dim)}, "
                                 f"got {tuple(embedding.shape)}")
            self.embedding.weight.data.copy_(embedding)
        self.embedding.weight.requires_grad_(not freeze_embedding)
        self.kernel_size = kernel_size
        self.conv1 = nn.Conv1d(embed_dim, channels, kernel_size)
        self.conv2 = nn.Conv1d(channels, channels, kernel_size)
        self.conv3 = nn.Conv1d(channels, channels, kernel_size)
        self.fc1 = nn.Linear(channels, hidden)
        self.dropout = nn.Dropout(dropout)
        self.fc = nn.Linear(hidden, num_classes)

    @property
    def min_length(self) -> int:
        """Shortest input sequence the three convolutions and two pools accept."""
        return 5 * (self.kernel_size - 1) + 1

    def features(self, tokens: torch.Tensor) -> torch.Tensor:
        if tokens.dim() != 2 or tokens.shape[1] < self.min_length:
            raise ValueError(f"tokens must be B x L with L >= {self.min_length}, got {tuple(tokens.shape)}")
        o = self.embedding(tokens).transpose(1, 2)               # B x E x L
        o = F.max_pool1d(F.relu(self.conv1(o)), self.kernel_size, stride=1)
        o = F.max_pool1d(F.relu(self.conv2(o)), self.kernel_size, stride=1)
        o = F.relu(self.conv3(o)).amax(dim=2)                    # global max pool over time
        return self.dropout(F.relu(self.fc1(o)))

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.fc(self.features(tokens))
