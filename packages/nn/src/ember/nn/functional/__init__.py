"""ember.nn.functional: torch.nn.functional's functions, ``import ember.nn.functional as F``.

Each module here holds one family and lists its names in ``__all__``; this file gathers
them. The functions are thin: they check and parse torch's arguments and call
tensor-core's primitives (or compose public ops), so autograd differentiates them.
"""

from .activations import *  # noqa: F403
from .activations_along_dim import *  # noqa: F403
from .adaptive_pooling import *  # noqa: F403
from .attention import *  # noqa: F403
from .conv import *  # noqa: F403
from .distance import *  # noqa: F403
from .dropout import *  # noqa: F403
from .grid_sampling import *  # noqa: F403
from .linear import *  # noqa: F403
from .losses import *  # noqa: F403
from .losses_ctc import *  # noqa: F403
from .losses_margin import *  # noqa: F403
from .multi_head_attention import *  # noqa: F403
from .normalization import *  # noqa: F403
from .padding import *  # noqa: F403
from .pooling import *  # noqa: F403
from .sparse import *  # noqa: F403
from .vision import *  # noqa: F403
