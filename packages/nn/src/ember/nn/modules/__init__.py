"""The layers of ember.nn, one family per module (named as torch's files are); each lists
its classes in ``__all__``."""

from types import ModuleType as _ModuleType

from .activation import *  # noqa: F403
from .batchnorm import *  # noqa: F403
from .channelshuffle import *  # noqa: F403
from .container import *  # noqa: F403
from .conv import *  # noqa: F403
from .distance import *  # noqa: F403
from .dropout import *  # noqa: F403
from .flatten import *  # noqa: F403
from .fold import *  # noqa: F403
from .hooks import (  # noqa: F401
    register_module_buffer_registration_hook,
    register_module_forward_hook,
    register_module_forward_pre_hook,
    register_module_full_backward_hook,
    register_module_full_backward_pre_hook,
    register_module_module_registration_hook,
    register_module_parameter_registration_hook,
)
from .instancenorm import *  # noqa: F403
from .lazy import LazyModuleMixin  # noqa: F401
from .linear import *  # noqa: F403
from .loss import *  # noqa: F403
from .module import Module  # noqa: F401
from .multihead_attention import *  # noqa: F403
from .normalization import *  # noqa: F403
from .padding import *  # noqa: F403
from .pixelshuffle import *  # noqa: F403
from .pooling import *  # noqa: F403
from .rnn import *  # noqa: F403
from .sparse import *  # noqa: F403
from .transformer import *  # noqa: F403
from .upsampling import *  # noqa: F403

# the classes and functions above, not the submodules (``ember.nn.utils`` is not
# ``modules/utils.py``)
__all__ = [_n for _n, _v in list(globals().items())
           if not _n.startswith("_") and not isinstance(_v, _ModuleType)]
