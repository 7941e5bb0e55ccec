"""ember.nn: torch.nn's module library, ``import ember.nn as nn``.

``Module`` and the containers (``modules/``), the layers over tensor-core's primitives,
``functional`` (``import ember.nn.functional as F``), ``init`` and ``utils``. Importing it
installs autograd, which the layers need.
"""

import ember.autograd  # noqa: F401  (installs autograd into the dispatcher)

from . import functional, init, modules, parameter, utils  # noqa: F401
from .modules import *  # noqa: F403
from .modules import Module  # noqa: F401
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter  # noqa: F401
