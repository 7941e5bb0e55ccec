"""``ember.func`` against ``torch.func``: each program applies transforms to a function and
runs in both frameworks on the same random inputs (float64 and float32); results are
compared leaf by leaf (same pytree structure, dtypes, shapes, values). Then errors,
``no_grad``, composition with autograd, and vmap's options.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as tfw
import torch.func as tf
from autograd_oracle import TOP as ember
from autograd_oracle import check, pair

import ember.autograd.forward_ad as efw
import ember.func as ef
from ember.func.pytree import tree_flatten

M, V, S = (3, 4), (4,), ()


def f_scalar(m: Any, x: Any) -> Any:
    return (x.sin() * x + x.pow(2).softmax(-1)).sum()


def f_pair(m: Any, x: Any, y: Any) -> Any:
    return ((x @ y.t()).tanh() ** 2).mean() + (x * y).logsumexp(-1).sum()


def f_vec(m: Any, x: Any) -> Any:
    return m.cat([x.exp()[1:], x[:1] * x.sum()]) / (1 + x.norm())


def f_tree(m: Any, d: Any) -> Any:
    return (d["w"] @ d["b"][0]).sigmoid().sum() + d["b"][1].pow(3).sum()


def f_dict_out(m: Any, x: Any, y: Any) -> Any:
    return {"p": x * y, "q": ((x - y).sum(), y.exp())}


# (id, program(F, m, *inputs), input shapes); F is ember.func or torch.func, m the top module
PROGRAMS: list[tuple[str, Any, list[Any]]] = [
    ("grad", lambda F, m, x: F.grad(lambda a: f_scalar(m, a))(x), [M]),
    ("grad_0d", lambda F, m, x: F.grad(lambda a: a.exp() * a.sin())(x), [S]),
    ("grad_argnums", lambda F, m, x, y: F.grad(lambda a, b: f_pair(m, a, b), (0, 1))(x, y),
     [M, M]),
    ("grad_argnum1", lambda F, m, x, y: F.grad(lambda a, b: f_pair(m, a, b), 1)(x, y), [M, M]),
    ("grad_argnum_negative", lambda F, m, x, y: F.grad(lambda a, b: f_pair(m, a, b), -1)(x, y),
     [M, M]),
    ("grad_unused", lambda F, m, x, y: F.grad(lambda a, b: (a * 2).sum(), (0, 1))(x, y), [M, V]),
    ("grad_pytree", lambda F, m, w, b0, b1: F.grad(lambda d: f_tree(m, d))(
        {"w": w, "b": (b0, b1)}), [M, V, (2,)]),
    ("grad_aux", lambda F, m, x: F.grad(lambda a: (f_scalar(m, a), {"s": a.sin()}),
                                        has_aux=True)(x), [M]),
    ("grad_and_value", lambda F, m, x: F.grad_and_value(lambda a: f_scalar(m, a))(x), [M]),
    ("grad_and_value_aux", lambda F, m, x: F.grad_and_value(
        lambda a: (f_scalar(m, a), a * 2), has_aux=True)(x), [M]),
    ("grad_kwargs", lambda F, m, x: F.grad(lambda a, scale: (a * scale).sum())(x, scale=3.0),
     [M]),
    ("grad_of_grad", lambda F, m, x: F.grad(F.grad(lambda a: a.sin() * a.exp()))(x), [S]),
    ("grad_of_grad_of_grad", lambda F, m, x: F.grad(F.grad(F.grad(lambda a: a.tanh())))(x),
     [S]),
    ("grad_closure", lambda F, m, x, c: F.grad(
        lambda a: F.grad(lambda b: (a * b.sin()).sum())(c).pow(2).sum())(x), [V, V]),
    ("vjp", lambda F, m, x, g: F.vjp(lambda a: f_vec(m, a), x)[1](g), [V, V]),
    ("vjp_output", lambda F, m, x: F.vjp(lambda a: f_vec(m, a), x)[0], [V]),
    ("vjp_tree", lambda F, m, x, y, g1, g2, g3: F.vjp(lambda a, b: f_dict_out(m, a, b), x, y)[1](
        {"p": g1, "q": (g2, g3)}), [M, M, M, S, M]),
    ("vjp_aux", lambda F, m, x, g: F.vjp(lambda a: (a.exp(), a.cos()), x, has_aux=True)[2],
     [M, M]),
    ("jvp", lambda F, m, x, t: F.jvp(lambda a: f_vec(m, a), (x,), (t,)), [V, V]),
    ("jvp_two", lambda F, m, x, y, tx, ty: F.jvp(lambda a, b: f_pair(m, a, b), (x, y), (tx, ty)),
     [M, M, M, M]),
    ("jvp_tree_out", lambda F, m, x, y, tx, ty: F.jvp(lambda a, b: f_dict_out(m, a, b),
                                                      (x, y), (tx, ty)), [M, M, M, M]),
    ("jvp_aux", lambda F, m, x, t: F.jvp(lambda a: (a.sin(), a * 3), (x,), (t,), has_aux=True),
     [M, M]),
    ("jvp_independent", lambda F, m, x, t: F.jvp(lambda a: (a.sin(), m.ones(2)), (x,), (t,)),
     [V, V]),
    ("jacrev", lambda F, m, x: F.jacrev(lambda a: f_vec(m, a))(x), [V]),
    ("jacrev_matrix", lambda F, m, x: F.jacrev(lambda a: a.softmax(1) * a)(x), [M]),
    ("jacrev_argnums", lambda F, m, x, y: F.jacrev(lambda a, b: a @ b, (0, 1))(x, y),
     [M, (4, 2)]),
    ("jacrev_tree", lambda F, m, x, y: F.jacrev(lambda a, b: f_dict_out(m, a, b), (0, 1))(x, y),
     [V, V]),
    ("jacrev_aux", lambda F, m, x: F.jacrev(lambda a: (a.sin(), a.cos()), has_aux=True)(x), [V]),
    ("jacrev_0d", lambda F, m, x: F.jacrev(lambda a: a.exp() * 2)(x), [S]),
    ("jacfwd", lambda F, m, x: F.jacfwd(lambda a: f_vec(m, a))(x), [V]),
    ("jacfwd_matrix", lambda F, m, x: F.jacfwd(lambda a: a.softmax(1) * a)(x), [M]),
    ("jacfwd_argnums", lambda F, m, x, y: F.jacfwd(lambda a, b: a @ b, (0, 1))(x, y),
     [M, (4, 2)]),
    ("jacfwd_tree", lambda F, m, x, y: F.jacfwd(lambda a, b: f_dict_out(m, a, b), (0, 1))(x, y),
     [V, V]),
    ("jacfwd_aux", lambda F, m, x: F.jacfwd(lambda a: (a.sin(), a.cos()), has_aux=True)(x), [V]),
    ("hessian", lambda F, m, x: F.hessian(lambda a: f_scalar(m, a))(x), [V]),
    ("hessian_matrix_input", lambda F, m, x: F.hessian(lambda a: f_scalar(m, a))(x), [(2, 3)]),
    ("hessian_argnums", lambda F, m, x, y: F.hessian(lambda a, b: f_pair(m, a, b), (0, 1))(x, y),
     [(2, 3), (2, 3)]),
    ("jacrev_jacrev", lambda F, m, x: F.jacrev(F.jacrev(lambda a: f_vec(m, a)))(x), [V]),
    ("jacfwd_jacfwd", lambda F, m, x: F.jacfwd(F.jacfwd(lambda a: a.sin() * a.sum()))(x), [V]),
    ("jacrev_jacfwd", lambda F, m, x: F.jacrev(F.jacfwd(lambda a: f_scalar(m, a)))(x), [V]),
    ("jvp_of_grad", lambda F, m, x, t: F.jvp(F.grad(lambda a: f_scalar(m, a)), (x,), (t,)),
     [M, M]),
    ("grad_of_jvp", lambda F, m, x, t: F.grad(
        lambda a: F.jvp(lambda b: f_vec(m, b), (a,), (t,))[1].sum())(x), [V, V]),
    ("jvp_closure", lambda F, m, x, c, t1, t2: F.jvp(
        lambda a: F.jvp(lambda b: (a * b.sin()).exp(), (c,), (t1,))[1], (x,), (t2,)),
     [V, V, V, V]),
    ("jacfwd_closure_jacrev", lambda F, m, x, c: F.jacfwd(
        lambda a: F.jacrev(lambda b: (a * b).tanh())(c))(x), [V, V]),
    ("vmap", lambda F, m, x: F.vmap(lambda a: f_vec(m, a))(x), [(5, 4)]),
    ("vmap_grad", lambda F, m, x: F.vmap(F.grad(lambda a: f_scalar(m, a)))(x), [(5, 4)]),
    ("grad_vmap", lambda F, m, x: F.grad(lambda a: F.vmap(lambda r: f_scalar(m, r))(a).sum())(x),
     [(5, 4)]),
    ("vmap_jacrev", lambda F, m, x: F.vmap(F.jacrev(lambda a: f_vec(m, a)))(x), [(2, 4)]),
    ("vmap_in_dims", lambda F, m, x, y: F.vmap(lambda a, b: a * b.sum(), in_dims=(1, None))(x, y),
     [M, V]),
    ("vmap_out_dims", lambda F, m, x: F.vmap(lambda a: (a.exp(), a.sum()), in_dims=1,
                                             out_dims=(1, 0))(x), [M]),
    ("vmap_negative_dims", lambda F, m, x: F.vmap(lambda a: a * 2, in_dims=-1, out_dims=-1)(x),
     [(2, 3, 4)]),
    ("vmap_nested", lambda F, m, x, y: F.vmap(F.vmap(lambda a, b: a @ b, in_dims=(0, None)),
                                              in_dims=(None, 0))(x, y), [M, (2, 4, 5)]),
    ("vmap_tree_in_dims", lambda F, m, x, y: F.vmap(
        lambda d: d["a"] + d["b"], in_dims=({"a": 1, "b": None},))({"a": x, "b": y}), [M, (3,)]),
    ("vmap_return_types", lambda F, m, x: F.vmap(lambda a: a.max(0))(x), [M]),
    ("vmap_tuple_list_out", lambda F, m, x: F.vmap(lambda a: [a.max(), (a.min(), a)])(x), [M]),
    ("vmap_empty_batch", lambda F, m, x: F.vmap(lambda a: a.exp().sum())(x), [(0, 3)]),
    ("vmap_kwargs", lambda F, m, x, y: F.vmap(lambda a, k: a * k)(x, k=y), [M, V]),
    ("vmap_out_dims_none", lambda F, m, x, y: F.vmap(lambda a: (a * 2, y), out_dims=(0, None))(x),
     [M, V]),
]

IDS = [p[0] for p in PROGRAMS]


def run_both(program: Any, shapes: list[Any], dtype: str) -> tuple[Any, Any]:
    pairs = [pair(s, dtype, seed=i, low=-1.5, high=1.5) for i, s in enumerate(shapes)]
    re = program(ef, ember, *[p[0] for p in pairs])
    rt = program(tf, torch, *[p[1] for p in pairs])
    return re, rt


def check_tree(re: Any, rt: Any) -> None:
    leaves_e, spec_e = tree_flatten(re)
    leaves_t, spec_t = tree_flatten(rt)
    assert repr(spec_e) == repr(spec_t)
    for a, b in zip(leaves_e, leaves_t):
        check(a, b)
        assert a.requires_grad == b.requires_grad


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("program", PROGRAMS, ids=IDS)
def test_transform_matches_torch(program: Any, dtype: str) -> None:
    _, fn, shapes = program
    check_tree(*run_both(fn, shapes, dtype))


# ---------------------------------------------------------------------- grad modes, autograd

@pytest.mark.parametrize("program", [p for p in PROGRAMS if p[0] in (
    "grad", "grad_of_grad", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "vmap_grad")],
    ids=lambda p: p[0])
def test_transforms_work_under_no_grad(program: Any) -> None:
    _, fn, shapes = program
    with ember.no_grad(), torch.no_grad():
        check_tree(*run_both(fn, shapes, "float64"))
    assert ember.is_grad_enabled()


def test_transforms_work_in_inference_mode() -> None:
    program = next(p for p in PROGRAMS if p[0] == "jvp_of_grad")
    with ember.inference_mode(), torch.inference_mode():
        check_tree(*run_both(program[1], program[2], "float64"))
    assert not ember.is_inference_mode_enabled()


def test_no_grad_inside_the_function_is_respected() -> None:
    def program(F: Any, m: Any, x: Any) -> Any:
        def f(a: Any) -> Any:
            with m.no_grad():
                c = a.exp()
            return (c * a).sum()

        return F.grad(f)(x)

    check_tree(*run_both(program, [M], "float64"))


def test_results_stay_differentiable_for_inputs_that_require_grad() -> None:
    def program(F: Any, m: Any, x: Any, v: Any) -> Any:
        x = x.clone().requires_grad_()
        g = F.grad(lambda a: f_scalar(m, a))(x)
        assert g.requires_grad
        return m.autograd.grad((g * v).sum(), x)[0]

    check_tree(*run_both(program, [M, M], "float64"))


def test_transform_of_a_dual_tensor_carries_its_tangent() -> None:
    """Forward mode over ``grad``: the tangent of the gradient is a Hessian-vector product."""

    def program(F: Any, m: Any, x: Any, t: Any) -> Any:
        fw = efw if m is ember else tfw
        with fw.dual_level():
            g = F.grad(lambda a: f_scalar(m, a))(fw.make_dual(x, t))
            return fw.unpack_dual(g).tangent

    check_tree(*run_both(program, [V, V], "float64"))


def test_inputs_are_left_alone() -> None:
    x = ember.randn(3, 4)
    before = x.numpy().copy()
    ef.grad(lambda a: (a * a).sum())(x)
    ef.jvp(lambda a: a.exp(), (x,), (x,))
    assert not x.requires_grad and x.grad_fn is None and x.grad is None
    np.testing.assert_array_equal(x.numpy(), before)


# ---------------------------------------------------------------------- errors, as torch raises

ERRORS: list[tuple[str, Any, list[Any]]] = [
    ("grad_vector_output", lambda F, m, x: F.grad(lambda a: a * 2)(x), [M]),
    ("grad_float_output", lambda F, m, x: F.grad(lambda a: 3.0)(x), [M]),
    ("grad_aux_not_tuple", lambda F, m, x: F.grad(lambda a: a.sum(), has_aux=True)(x), [M]),
    ("grad_argnum_range", lambda F, m, x: F.grad(lambda a: a.sum(), argnums=1)(x), [M]),
    ("grad_argnum_float", lambda F, m, x: F.grad(lambda a: a.sum(), argnums=1.0)(x), [M]),
    ("grad_argnums_empty", lambda F, m, x: F.grad(lambda a: a.sum(), argnums=())(x), [M]),
    ("grad_argnums_repeated", lambda F, m, x: F.grad(lambda a, b: (a * b).sum(), (0, 0))(x, x),
     [M]),
    ("grad_int_input", lambda F, m, x: F.grad(lambda a: a.sum())(m.arange(3)), [M]),
    ("grad_float_input", lambda F, m, x: F.grad(lambda a: a * 2)(3.0), [M]),
    ("jvp_not_tuple", lambda F, m, x: F.jvp(lambda a: a, x, x), [M]),
    ("jvp_structure", lambda F, m, x: F.jvp(lambda a: a, (x,), (x, x)), [M]),
    ("jvp_size", lambda F, m, x: F.jvp(lambda a: a, (x,), (m.ones(2),)), [M]),
    ("jvp_empty", lambda F, m, x: F.jvp(lambda a: a, (), ()), [M]),
    ("jvp_int_primal", lambda F, m, x: F.jvp(lambda a: a, (m.arange(3),), (m.arange(3),)), [M]),
    ("jvp_float_output", lambda F, m, x: F.jvp(lambda a: 3.0, (x,), (x,)), [M]),
    ("jvp_float_tangent", lambda F, m, x: F.jvp(lambda a: a, (x,), (3.0,)), [M]),
    ("vjp_cotangent_structure", lambda F, m, x: F.vjp(lambda a: a.sin(), x)[1]((x,)), [M]),
    ("vjp_cotangent_shape", lambda F, m, x: F.vjp(lambda a: a.sin(), x)[1](m.ones(2)), [M]),
    ("vjp_float_output", lambda F, m, x: F.vjp(lambda a: 3.0, x), [M]),
    ("vjp_aux_not_tuple", lambda F, m, x: F.vjp(lambda a: a, x, has_aux=True), [M]),
    ("jacrev_aux_not_tuple", lambda F, m, x: F.jacrev(lambda a: a, has_aux=True)(x), [M]),
    ("jacfwd_int_input", lambda F, m, x: F.jacfwd(lambda a: a)(m.arange(3)), [M]),
    ("vmap_sizes", lambda F, m, x, y: F.vmap(lambda a, b: a + b)(x, y), [M, (4, 4)]),
    ("vmap_in_dim_range", lambda F, m, x: F.vmap(lambda a: a, in_dims=2)(x), [M]),
    ("vmap_in_dims_structure", lambda F, m, x: F.vmap(lambda a: a, in_dims=(0, 0))(x), [M]),
    ("vmap_in_dims_list", lambda F, m, x: F.vmap(lambda a: a, in_dims=[0])(x), [M]),
    ("vmap_in_dims_none", lambda F, m, x: F.vmap(lambda a: a, in_dims=None)(x), [M]),
    ("vmap_non_tensor", lambda F, m, x: F.vmap(lambda a, s: a * s, in_dims=(0, 0))(x, 2.0), [M]),
    ("vmap_nothing_mapped", lambda F, m, x: F.vmap(lambda a: a, in_dims=(None,))(x), [M]),
    ("vmap_no_inputs", lambda F, m, x: F.vmap(lambda: x)(), [M]),
    ("vmap_float_output", lambda F, m, x: F.vmap(lambda a: 3.0)(x), [M]),
    ("vmap_out_dim_range", lambda F, m, x: F.vmap(lambda a: a, out_dims=2)(x), [M]),
    ("vmap_out_dims_structure", lambda F, m, x: F.vmap(lambda a: (a, a), out_dims=(0,))(x), [M]),
    ("vmap_batched_out_dim_none", lambda F, m, x: F.vmap(lambda a: a, out_dims=None)(x), [M]),
    ("vmap_random", lambda F, m, x: F.vmap(lambda a: a + m.rand(()))(x), [M]),
    ("vmap_randomness_value", lambda F, m, x: F.vmap(lambda a: a, randomness="bad")(x), [M]),
    ("vmap_chunk_size", lambda F, m, x: F.vmap(lambda a: a, chunk_size=0)(x), [M]),
]


@pytest.mark.parametrize("case", ERRORS, ids=[c[0] for c in ERRORS])
def test_errors_match_torch(case: Any) -> None:
    _, program, shapes = case
    pairs = [pair(s, "float32", seed=i) for i, s in enumerate(shapes)]
    with pytest.raises(Exception) as torch_error:
        program(tf, torch, *[p[1] for p in pairs])
    before = [p[0].numpy().copy() for p in pairs]
    with pytest.raises(torch_error.type) as ember_error:
        program(ef, ember, *[p[0] for p in pairs])
    assert str(ember_error.value)
    for (e, _), b in zip(pairs, before):
        np.testing.assert_array_equal(e.numpy(), b)
        assert not e.requires_grad


# ---------------------------------------------------------------------- vmap randomness

def test_vmap_randomness_same_and_different() -> None:
    ember.manual_seed(0)
    same = ef.vmap(lambda a: a + ember.rand(()), randomness="same")(ember.zeros(4))
    assert np.unique(same.numpy()).size == 1
    different = ef.vmap(lambda a: a + ember.rand(()), randomness="different")(ember.zeros(4))
    assert np.unique(different.numpy()).size == 4
