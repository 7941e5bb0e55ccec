"""The differentiable primitive of the factory family, ``complex``, saves no more for backward
than torch does, with each part requiring grad or not (the factories and samplers are not
differentiable)."""

import pytest
from autograd_oracle import check_saved


@pytest.mark.parametrize("needs", [(True, True), (True, False), (False, True)])
@pytest.mark.parametrize("shapes", [[(3, 4), (4,)], [(), (2, 3)]])
def test_complex(needs, shapes):
    check_saved(lambda m, x, y: m.complex(x, y), shapes, needs=needs)

