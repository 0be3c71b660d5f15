"""Per-user model configs: embedded mode's default EMBEDDING config
(docs/design/0001-pipeline-contract.md), and setting, showing and deleting the default EMBEDDING and
CHAT configs."""

from ragline.application.provisioning.embedding import DefaultEmbedding, ProvisionEmbedding
from ragline.application.provisioning.model_configs import (
    DimensionChangeRefused,
    EmbeddingChange,
    ManageModelConfigs,
    ModelConfigRefused,
    ModelConfigView,
    ModelUnusable,
    ReembeddingRequired,
    ReembeddingUnavailable,
    UserModelConfigs,
)

__all__ = [
    "DefaultEmbedding",
    "DimensionChangeRefused",
    "EmbeddingChange",
    "ManageModelConfigs",
    "ModelConfigRefused",
    "ModelConfigView",
    "ModelUnusable",
    "ProvisionEmbedding",
    "ReembeddingRequired",
    "ReembeddingUnavailable",
    "UserModelConfigs",
]
