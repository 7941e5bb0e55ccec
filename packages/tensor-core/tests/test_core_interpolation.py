"""Interpolation against torch: every mode at 1 to 3 spatial dims, up and down, sizes and
scale factors (non-integer ones, recomputed or not), align_corners both ways, antialiased,
row-major, channels-last and non-contiguous inputs, empty batches, float32/float64, the
half types and uint8; the backward primitives likewise; the nearest modes' indices over
many sizes; mode 'area' through adaptive average pooling; torch's errors and warnings;
the native loops against the numpy reference."""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch_oracle import check, pair

import ember.core as ember
from ember.core import native
from ember.core.ops import adaptive_pooling as AP
from ember.core.ops import interpolation as I

MODES = {1: ["nearest", "nearest-exact", "linear", "area"],
         2: ["nearest", "nearest-exact", "bilinear", "bicubic", "area"],
         3: ["nearest", "nearest-exact", "trilinear", "area"]}
CASES = [(nd, mode) for nd, modes in MODES.items() for mode in modes]
SHAPES = {1: (2, 3, 9), 2: (2, 3, 7, 6), 3: (2, 3, 5, 4, 6)}
RESIZES = [{"size": 13}, {"size": (4, 11, 3)}, {"scale_factor": 2.0},
           {"scale_factor": 1.7}, {"scale_factor": 0.6},
           {"scale_factor": 1.3, "recompute_scale_factor": True},
           {"scale_factor": (0.5, 2.5, 1.25)}]
FORMATS = {2: (torch.channels_last, ember.channels_last),
           3: (torch.channels_last_3d, ember.channels_last_3d)}


def _resize(kwargs, nd):
    """``kwargs`` with its per-dim tuples cut to ``nd`` dims."""
    return {k: v[:nd] if isinstance(v, tuple) else v for k, v in kwargs.items()}


def _aligned(mode):
    return [None] if mode in ("nearest", "nearest-exact", "area") else [False, True]


def _gradients(shape, dtype):
    """float32 gradients of small integers: their sums are then exact in any order (a
    downsampling backward sums hundreds of them, in another order than torch's)."""
    if dtype != "float32":
        return pair(shape, dtype, seed=2)
    a = np.random.default_rng(2).integers(-3, 4, shape).astype(np.float32)
    return ember.from_numpy(a.copy()), torch.from_numpy(a)


def _images(shape, dtype):
    """Pixels (0 to 255) for uint8, else ``pair``'s values."""
    if dtype != "uint8":
        return pair(shape, dtype)
    a = np.random.default_rng(0).integers(0, 256, shape).astype(np.uint8)
    return ember.from_numpy(a.copy()), torch.from_numpy(a)


def _inputs(nd, dtype, layout, shape=None, make=pair):
    shape = shape or SHAPES[nd]
    if layout == "channels_last":
        e, t = make(shape, dtype)
        return (e.contiguous(memory_format=FORMATS[nd][1]),
                t.contiguous(memory_format=FORMATS[nd][0]))
    if layout == "row-major":
        return make(shape, dtype)
    e, t = make(tuple(reversed(shape)), dtype)
    dims = tuple(reversed(range(len(shape))))
    return e.permute(*dims), t.permute(*dims)


def _check_geometry(actual, expected):
    check(actual, expected)
    assert tuple(actual.stride()) == tuple(expected.stride())


@pytest.mark.parametrize("kwargs", RESIZES, ids=[str(r) for r in RESIZES])
@pytest.mark.parametrize("nd,mode", CASES, ids=[f"{m}-{nd}d" for nd, m in CASES])
def test_interpolate_matches_torch(nd, mode, kwargs):
    kw = _resize(kwargs, nd)
    if mode == "area" and "scale_factor" in kw and isinstance(kw["scale_factor"], tuple):
        return  # (torch recomputes area's sizes: the same path as a single factor)
    layouts = ["row-major", "transposed"] + (["channels_last"] if nd > 1 else [])
    for dtype in ("float32", "float64"):
        for layout in layouts:
            for ac in _aligned(mode):
                xe, xt = _inputs(nd, dtype, layout)
                _check_geometry(I.interpolate(xe, mode=mode, align_corners=ac, **kw),
                                F.interpolate(xt, mode=mode, align_corners=ac, **kw))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("nd,mode", CASES, ids=[f"{m}-{nd}d" for nd, m in CASES])
def test_half_types_match_torch(nd, mode, dtype):
    # the channels-last layouts take torch's other kernels (float32 weights, other indices)
    for layout in ["row-major"] + (["channels_last"] if nd > 1 else []):
        for kw in ({"scale_factor": 1.7}, {"size": 5}, {"size": 70}):
            for ac in _aligned(mode):
                xe, xt = _inputs(nd, dtype, layout, (2, 5) + SHAPES[nd][2:])
                _check_geometry(I.interpolate(xe, mode=mode, align_corners=ac, **kw),
                                F.interpolate(xt, mode=mode, align_corners=ac, **kw))


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_nearest_modes_take_uint8(nd):
    rng = np.random.default_rng(0)
    a = rng.integers(0, 256, SHAPES[nd]).astype(np.uint8)
    for mode in ("nearest", "nearest-exact"):
        check(I.interpolate(ember.from_numpy(a), scale_factor=1.6, mode=mode),
              F.interpolate(torch.from_numpy(a), scale_factor=1.6, mode=mode))


AA_RESIZES = [{"size": (5, 4)}, {"size": (13, 2)}, {"scale_factor": 0.3},
              {"scale_factor": 1.6}, {"scale_factor": (0.5, 2.2)}]


@pytest.mark.parametrize("kwargs", AA_RESIZES, ids=[str(r) for r in AA_RESIZES])
@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "lanczos"])
def test_antialiased_modes_match_torch(mode, kwargs):
    """Pillow's filters, as wide as the scale when downsampling; uint8 in torch's integer
    arithmetic, to the same integers (3 channels take torch's AVX loops, 5 its generic
    ones)."""
    for dtype in ("float32", "float64", "uint8"):
        for channels in (3, 5):
            for layout in ("row-major", "channels_last", "transposed"):
                for ac in ([False] if mode == "lanczos" else [False, True]):
                    xe, xt = _inputs(2, dtype, layout, (2, channels, 11, 9), _images)
                    _check_geometry(I.interpolate(xe, mode=mode, antialias=True,
                                                  align_corners=ac, **kwargs),
                                    F.interpolate(xt, mode=mode, antialias=True,
                                                  align_corners=ac, **kwargs))


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_uint8_resizes_are_torchs_integers(mode):
    for kw in ({"size": (23, 4)}, {"scale_factor": 1.7}, {"size": (1, 30)}):
        for channels in (1, 3, 5):
            for layout in ("row-major", "channels_last"):
                for ac in (False, True):
                    xe, xt = _inputs(2, "uint8", layout, (2, channels, 6, 13), _images)
                    _check_geometry(I.interpolate(xe, mode=mode, align_corners=ac, **kw),
                                    F.interpolate(xt, mode=mode, align_corners=ac, **kw))


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nearest_indices_are_torchs_over_many_sizes(mode, dtype):
    """Each output takes torch's input index, whichever of torch's two index formulas its
    kernel uses (the generic one in the input's opmath type for outputs of over 128 rows
    and columns, float32 with shortcuts otherwise), with and without a scale factor."""
    for size in range(1, 24):
        x = np.tile(np.arange(size, dtype=dtype), (size, 1))[None, None]
        for out in list(range(1, 50, 3)) + [97, 130, 200]:
            for scale in (None, out / size):
                for rows in (1, out):  # the 128-row-and-column threshold both ways
                    kw = {"size": (rows, out)} if scale is None else {
                        "scale_factor": (rows / size, scale)}
                    got = I.interpolate(ember.from_numpy(x), mode=mode, **kw)
                    want = F.interpolate(torch.from_numpy(x), mode=mode, **kw)
                    np.testing.assert_array_equal(got.numpy(), want.numpy(),
                                                  err_msg=f"{size} -> {out}, scale {scale}")


def test_recomputed_scale_factors_change_the_values_as_torchs():
    xe, xt = pair((1, 2, 9), "float64")
    for recompute in (False, True):
        check(I.interpolate(xe, scale_factor=1.45, mode="linear",
                            recompute_scale_factor=recompute),
              F.interpolate(xt, scale_factor=1.45, mode="linear",
                            recompute_scale_factor=recompute))
    plain = I.interpolate(xe, scale_factor=1.45, mode="linear")
    redone = I.interpolate(xe, scale_factor=1.45, mode="linear", recompute_scale_factor=True)
    assert not np.allclose(plain.numpy(), redone.numpy())


@pytest.mark.parametrize("nd,mode", [c for c in CASES if c[1] != "area"],
                         ids=[f"{m}-{nd}d" for nd, m in CASES if m != "area"])
def test_empty_batch_matches_torch(nd, mode):
    for ac in _aligned(mode):
        xe, xt = pair((0,) + SHAPES[nd][1:], "float32")
        _check_geometry(I.interpolate(xe, scale_factor=2.0, mode=mode, align_corners=ac),
                        F.interpolate(xt, scale_factor=2.0, mode=mode, align_corners=ac))


def _backward_args(form, size, out, scale, ac):
    scales = [scale] * form.nd
    torch_args = [list(out), list(size)] + ([ac] if form.aligned else []) + scales
    params = {"output_size": tuple(out), "input_size": tuple(size),
              **dict(zip(I._SCALES[form.nd], scales))}
    if form.aligned:
        params["align_corners"] = ac
    return torch_args, params


# (torch's antialiased backward kernels are float32/float64 only)
BACKWARDS = [(name, dtype) for name, form in I.FORMS.items()
             for dtype in ("float32", "float64", "float16", "bfloat16")
             if not (form.antialias and dtype in ("float16", "bfloat16"))]


@pytest.mark.parametrize("name,dtype", BACKWARDS, ids=[f"{n}-{d}" for n, d in BACKWARDS])
def test_backward_primitives_match_torch(name, dtype):
    form = I.FORMS[name]
    size = SHAPES[form.nd]
    for out, scale in (((13, 11, 9), None), ((3, 2, 4), None), ((10, 8, 8), 1.6),
                       ((15, 16, 4), None)):
        out = out[:form.nd]
        for ac in ([False, True] if form.aligned else [False]):
            for layout in ["row-major"] + (["channels_last"] if form.nd > 1 else []):
                ge, gt = _inputs(form.nd, dtype, layout, size[:2] + out, _gradients)
                torch_args, params = _backward_args(form, size, out, scale, ac)
                want = getattr(torch.ops.aten, name + "_backward")(gt, *torch_args)
                _check_geometry(I.BACKWARD_OPS[name](ge, **params), want)


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_area_mode_is_torchs_adaptive_average_pool(nd):
    for kw in ({"size": 4}, {"size": (3, 2, 5)}, {"scale_factor": 0.5}):
        for layout in ["row-major"] + (["channels_last"] if nd > 1 else []):
            xe, xt = _inputs(nd, "float64", layout)
            _check_geometry(I.interpolate(xe, mode="area", **_resize(kw, nd)),
                            F.interpolate(xt, mode="area", **_resize(kw, nd)))


def test_adaptive_avg_pool3d_and_its_backward_match_torch():
    for shape, out in (((2, 3, 7, 5, 6), (3, 2, 4)), ((3, 5, 4, 6), 2), ((2, 3, 4, 5, 6), 1),
                       ((2, 3, 4, 5, 6), (None, 3, 2))):
        xe, xt = pair(shape, "float32")
        ye, yt = AP.adaptive_avg_pool3d(xe, out), F.adaptive_avg_pool3d(xt, out)
        _check_geometry(ye, yt)
        if ye.ndim == 5 and tuple(ye.shape[2:]) != (1, 1, 1):
            ge, gt = pair(tuple(yt.shape), "float32", seed=2)
            check(AP.ADAPTIVE_AVG_POOL3D_BACKWARD(ge, xe),
                  torch.ops.aten._adaptive_avg_pool3d_backward(gt, xt))


X4 = (2, 3, 4, 4)
ERRORS = [
    (lambda nn, x: nn.interpolate(x, size=(0, 6)), X4, "Input and output sizes should be"),
    (lambda nn, x: nn.interpolate(x, scale_factor=0.1), X4, "output (H: 0, W: 0)"),
    (lambda nn, x: nn.interpolate(x, size=0), (2, 3, 4), "input (W: 4) and output (W: 0)"),
    (lambda nn, x: nn.interpolate(x, size=(2.0, 3)), X4, "expected size to be one of int"),
    (lambda nn, x: nn.interpolate(x, size=(2, 3, 4)), X4, "same number of spatial dim"),
    (lambda nn, x: nn.interpolate(x, scale_factor=(2, 3, 4)), X4, "scale_factor must have"),
    (lambda nn, x: nn.interpolate(x), X4, "either size or scale_factor should be defined"),
    (lambda nn, x: nn.interpolate(x, 3, 2), X4, "only one of size or scale_factor"),
    (lambda nn, x: nn.interpolate(x, 3, align_corners=True), X4, "align_corners option"),
    (lambda nn, x: nn.interpolate(x, 3, mode="area", align_corners=False), X4,
     "align_corners option"),
    (lambda nn, x: nn.interpolate(x, 3, mode="linear"), X4, "Got 4D input, but linear"),
    (lambda nn, x: nn.interpolate(x, 3, mode="trilinear"), X4, "but trilinear mode needs 5D"),
    (lambda nn, x: nn.interpolate(x, 3, mode="bilinear"), (2, 3, 4), "bilinear mode needs 4D"),
    (lambda nn, x: nn.interpolate(x, 3, mode="foo"), X4, "Only 3D, 4D and 5D input"),
    (lambda nn, x: nn.interpolate(x, 3, mode="bicubic"), (2, 3, 4, 4, 4), "(got bicubic)"),
    (lambda nn, x: nn.interpolate(x, 3), (2, 3), "(got 2D)"),
    (lambda nn, x: nn.interpolate(x, 3, antialias=True), X4, "Anti-alias option"),
    (lambda nn, x: nn.interpolate(x, 3, mode="bilinear", antialias=True), (2, 3, 4),
     "Anti-alias option"),
    (lambda nn, x: nn.interpolate(x, 3, mode="lanczos", antialias=True, align_corners=True),
     X4, "Lanczos mode does not support align_corners=True"),
    (lambda nn, x: nn.interpolate(x, 3, mode="lanczos"), X4, "Lanczos mode requires"),
    (lambda nn, x: nn.interpolate(x, 3, mode="lanczos"), (2, 3, 4), "(got lanczos)"),
    (lambda nn, x: nn.interpolate(x.half(), 3, mode="bicubic", antialias=True), X4,
     "\"compute_index_ranges_weights\" not implemented for 'Half'"),
    (lambda nn, x: nn.interpolate(x, 3, recompute_scale_factor=True), X4,
     "recompute_scale_factor is not meaningful"),
    (lambda nn, x: nn.interpolate(x, 3), (2, 0, 4, 4), "Non-empty 4D data tensor expected"),
    (lambda nn, x: nn.interpolate(x, 3), (2, 3, 0, 4), "input (H: 0, W: 4)"),
    (lambda nn, x: nn.interpolate(x, 3, mode="trilinear"), (2, 0, 4, 4, 4), "Non-empty 5D"),
    (lambda nn, x: nn.interpolate(x, scale_factor=float("inf")), X4, "without overflow"),
    (lambda nn, x: nn.interpolate(x.int(), 3), X4, "not implemented for 'Int'"),
    (lambda nn, x: nn.interpolate(x.int(), 300), X4,
     "\"compute_indices_weights_nearest\" not implemented"),
    (lambda nn, x: nn.interpolate(x.long(), 3, mode="bilinear"), X4, "for 'Long'"),
    (lambda nn, x: nn.interpolate(x.to(torch.bool if nn is F else ember.bool), 3), X4,
     "not implemented for 'Bool'"),
    (lambda nn, x: nn.interpolate(x.to(torch.uint8 if nn is F else ember.uint8), 3,
                                  mode="area"), X4, "not implemented for 'Byte'"),
    (lambda nn, x: nn.interpolate(x.to(torch.uint8 if nn is F else ember.uint8), 3,
                                  mode="trilinear"), (2, 3, 4, 4, 4), "for 'Byte'"),
]


@pytest.mark.parametrize("fn,shape,phrase", ERRORS, ids=[e[2] for e in ERRORS])
def test_errors_match_torch(fn, shape, phrase):
    xe, xt = pair(shape, "float32")
    try:
        fn(F, xt)
    except Exception as expected:
        assert phrase in str(expected)
        with pytest.raises(Exception) as got:
            fn(I, xe)
        assert type(got.value) is type(expected)
        assert phrase in str(got.value)
    else:
        fn(I, xe)  # torch takes it: so does Ember


@pytest.mark.parametrize("alias,kwargs", [("upsample", {"mode": "bilinear"}),
                                          ("upsample_nearest", {}),
                                          ("upsample_bilinear", {})])
def test_deprecated_aliases_warn_as_torch_and_interpolate(alias, kwargs):
    xe, xt = pair(X4, "float64")
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        want = getattr(F, alias)(xt, size=(3, 7), **kwargs)
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        got = getattr(I, alias)(xe, size=(3, 7), **kwargs)
    check(got, want)
    assert [(w.category, str(w.message)) for w in ours] == \
        [(w.category, str(w.message)) for w in theirs]
    assert ours[0].filename == __file__  # (stacklevel: the caller's line)


NO_NATIVE = pytest.mark.skipif(
    native._compiler() is None or os.environ.get("EMBER_NATIVE") == "0",
    reason="native kernels off")
NATIVE = [("upsample_nearest2d", (2, 3, 7, 9), (14, 18), None),
          ("upsample_nearest2d", (2, 3, 70, 90), (33, 100), None),
          ("_upsample_nearest_exact2d", (40, 30, 19, 18), (40, 7), None),
          ("upsample_bilinear2d", (2, 3, 7, 9), (14, 18), False),
          ("upsample_bilinear2d", (40, 30, 19, 18), (31, 40), True),
          ("upsample_bicubic2d", (2, 3, 70, 9), (100, 5), False),
          ("upsample_bicubic2d", (1, 2, 9, 9), (7, 20), True)]


@NO_NATIVE
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", NATIVE, ids=[str(c) for c in NATIVE])
def test_native_loops_are_the_reference_at_any_thread_count(case, dtype):
    """The same bits at every thread count; the reference's bits for nearest (copies, and
    sums of small integers), its values to the last bits for the weighted modes (the loops
    fuse multiply-adds as torch's build does, the reference rounds each product)."""
    from ember.core.ops import interpolation_native as IN

    name, shape, out, ac = case
    params = {"output_size": out, "scales_h": None, "scales_w": None}
    if ac is not None:
        params["align_corners"] = ac
    rng = np.random.default_rng(0)
    x = rng.integers(-3, 4, shape).astype(dtype)
    g = rng.integers(-3, 4, shape[:2] + out).astype(dtype)
    assert IN._KERNELS(f"resample2d_{IN._SUFFIX[x.dtype]}") is not None
    want = (I.OPS[name].forward(x, **params),
            I.BACKWARD_OPS[name].forward(g, input_size=shape, **params))
    before = ember.get_num_threads()
    got = []
    try:
        for threads in (1, before):
            ember.set_num_threads(threads)
            got.append((I.OPS[name](ember.from_numpy(x), **params).numpy(),
                        I.BACKWARD_OPS[name](ember.from_numpy(g), input_size=shape,
                                             **params).numpy()))
    finally:
        ember.set_num_threads(before)
    tol = {"rtol": 1e-6, "atol": 1e-5} if dtype == "float32" else {"rtol": 1e-14, "atol": 1e-12}
    for a, b in zip(got[0], got[1]):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(got[0], want):
        if ac is None:
            np.testing.assert_array_equal(a, b)
        else:
            np.testing.assert_allclose(a, b, **tol)


def test_torch_function_modes_see_interpolate_as_torchs_do():
    from ember.core.function_modes import TorchFunctionMode

    def recording(base, names):
        class Recording(base):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                names.append(func.__name__)
                return func(*args, **(kwargs or {}))

        return Recording()

    xe, xt = pair(X4, "float32")
    ours, theirs = [], []
    with recording(TorchFunctionMode, ours):
        I.interpolate(xe, scale_factor=2.0, mode="bilinear")
    with recording(torch.overrides.TorchFunctionMode, theirs):
        F.interpolate(xt, scale_factor=2.0, mode="bilinear")
    assert ours[0] == theirs[0] == "interpolate"
