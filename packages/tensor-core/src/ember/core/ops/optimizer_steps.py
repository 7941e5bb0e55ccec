"""The one-pass steps (``fused_steps``) of RMSprop, Adadelta, Adamax, NAdam, RAdam, ASGD and
Rprop: ``_fused_rmsprop_(params, grads, square_avgs, grad_avgs, momentum_buffer_list, *,
lr, alpha, eps, weight_decay, momentum, centered, maximize)`` and the like, each the
statements of torch's per-parameter loop (``torch/optim/<name>.py``) on one element. The
caller counts the steps and keeps the 0-d state (``step``, NAdam's ``mu_product``, ASGD's
``eta`` and ``mu``), as it does for ``_fused_adam_``; the step reads them.
"""

from __future__ import annotations

from typing import Any

from .fused_steps import Operand, Step, register_step

__all__ = ["STEPS"]


def _lerp(cond: str, m: str, end: str, w: str) -> tuple[tuple[str, str, str], ...]:
    """``m.lerp_(end, w)`` as torch computes it: from the nearer end, a fused multiply-add
    (the flag ``near``: ``|w| < 0.5``)."""
    both = f"{cond}&" if cond else ""
    return ((cond, "d", f"{end} - {m}"),
            (f"{both}near", m, f"fma({w}, d, {m})"),
            (f"{both}!near", "ow", f"1 - {w}"),
            (f"{both}!near", m, f"fma(-d, ow, {end})"))


def _grad(decoupled: bool = False) -> tuple[tuple[str, str, str], ...]:
    """The gradient, maximized and with L2 weight decay; with ``decoupled``, the parameter
    decayed first instead (``param.mul_(1 - lr * weight_decay)``)."""
    return (("", "g", "direction * g"),
            *((("decoupled", "p", "p * decay"),) if decoupled else ()),
            ("l2", "g", "fma(p, wd, g)"))                       # grad.add(param, alpha=wd)


def _direction(k: dict[str, Any]) -> float:
    return -1.0 if k["maximize"] else 1.0


RMSPROP = Step(
    name="_fused_rmsprop_",
    operands=(Operand("self", "p", True), Operand("grads", "g"),
              Operand("square_avgs", "v", True), Operand("grad_avgs", "ga", True, "centered"),
              Operand("momentum_buffer_list", "b", True, "moves")),
    params=("lr", "alpha", "eps", "weight_decay", "momentum", "centered", "maximize"),
    number_names=("direction", "wd", "alpha", "ca", "eps", "mom", "neg_lr"),
    numbers=lambda k: {"direction": _direction(k), "wd": k["weight_decay"], "alpha": k["alpha"],
                       "ca": 1 - k["alpha"], "eps": k["eps"], "mom": k["momentum"],
                       "neg_lr": -k["lr"]},
    flags=lambda k: {"l2": k["weight_decay"] != 0, "centered": bool(k["centered"]),
                     "near": abs(1 - k["alpha"]) < 0.5, "moves": k["momentum"] > 0},
    statements=(
        *_grad(),
        ("", "v", "v * alpha"),
        ("", "v", "v + ca * g * g"),                        # addcmul_(grad, grad, 1 - alpha)
        *_lerp("centered", "ga", "g", "ca"),                # grad_avg.lerp_(grad, 1 - alpha)
        ("centered", "avg", "sqrt(v + -1 * ga * ga)"),      # addcmul(ga, ga, value=-1).sqrt_()
        ("!centered", "avg", "sqrt(v)"),
        ("", "avg", "avg + eps"),
        ("moves", "b", "b * mom + g / avg"),                # buf.mul_(m).addcdiv_(grad, avg)
        ("moves", "p", "fma(b, neg_lr, p)"),                # param.add_(buf, alpha=-lr)
        ("!moves", "p", "p + neg_lr * g / avg"),            # param.addcdiv_(grad, avg, -lr)
    ),
    doc="One RMSprop step of every parameter of ``self``, in place.")

ADADELTA = Step(
    name="_fused_adadelta_",
    operands=(Operand("self", "p", True), Operand("grads", "g"),
              Operand("square_avgs", "v", True), Operand("acc_deltas", "u", True)),
    params=("lr", "rho", "eps", "weight_decay", "maximize"),
    number_names=("direction", "wd", "rho", "crho", "eps", "neg_lr"),
    numbers=lambda k: {"direction": _direction(k), "wd": k["weight_decay"], "rho": k["rho"],
                       "crho": 1 - k["rho"], "eps": k["eps"], "neg_lr": -k["lr"]},
    flags=lambda k: {"l2": k["weight_decay"] != 0},
    statements=(
        *_grad(),
        ("", "v", "v * rho"),
        ("", "v", "v + crho * g * g"),
        ("", "std", "sqrt(v + eps)"),
        ("", "delta", "sqrt(u + eps)"),
        ("", "delta", "delta / std"),
        ("", "delta", "delta * g"),
        ("", "u", "u * rho"),
        ("", "u", "u + crho * delta * delta"),
        ("", "p", "fma(delta, neg_lr, p)"),                 # param.add_(delta, alpha=-lr)
    ),
    doc="One Adadelta step of every parameter of ``self``, in place.")


def _adamax_per_tensor(s: dict[str, list[float]], k: dict[str, Any]) -> dict[str, list[float]]:
    return {"neg_clr": [-(k["lr"] / (1 - k["beta1"] ** step)) for step in s["state_steps"]]}


ADAMAX = Step(
    name="_fused_adamax_",
    operands=(Operand("self", "p", True), Operand("grads", "g"),
              Operand("exp_avgs", "m", True), Operand("exp_infs", "u", True)),
    scalar_lists=("state_steps",),
    params=("lr", "beta1", "beta2", "eps", "weight_decay", "maximize"),
    number_names=("direction", "wd", "w", "beta2", "eps"),
    numbers=lambda k: {"direction": _direction(k), "wd": k["weight_decay"], "w": 1 - k["beta1"],
                       "beta2": k["beta2"], "eps": k["eps"]},
    flags=lambda k: {"l2": k["weight_decay"] != 0, "near": abs(1 - k["beta1"]) < 0.5},
    per_tensor=_adamax_per_tensor,
    per_tensor_names=("neg_clr",),
    statements=(
        *_grad(),
        *_lerp("", "m", "g", "w"),
        ("", "u", "maximum(u * beta2, absolute(g) + eps)"),
        ("", "p", "p + neg_clr * m / u"),                   # addcdiv_(m, u, value=-clr)
    ),
    doc="One Adamax step of every parameter of ``self``, in place (``state_steps`` counted "
        "already).")


def _nadam_per_tensor(s: dict[str, list[float]], k: dict[str, Any]) -> dict[str, list[float]]:
    lr, beta1, decay = k["lr"], k["beta1"], k["momentum_decay"]
    out: dict[str, list[float]] = {"bc2": [], "gval": [], "mval": []}
    for step, mu_product in zip(s["state_steps"], s["mu_products"]):
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * decay)))
        out["bc2"].append(1 - k["beta2"] ** step)
        out["gval"].append(-lr * (1.0 - mu) / (1.0 - mu_product))
        out["mval"].append((-lr * mu_next) / (1.0 - mu_product * mu_next))
    return out


def _decoupled_flags(k: dict[str, Any]) -> dict[str, bool]:
    decays = k["weight_decay"] != 0
    return {"l2": decays and not k["decoupled_weight_decay"],
            "decoupled": decays and bool(k["decoupled_weight_decay"]),
            "near": abs(1 - k["beta1"]) < 0.5}


NADAM = Step(
    name="_fused_nadam_",
    operands=(Operand("self", "p", True), Operand("grads", "g"),
              Operand("exp_avgs", "m", True), Operand("exp_avg_sqs", "v", True)),
    scalar_lists=("state_steps", "mu_products"),
    params=("lr", "beta1", "beta2", "eps", "weight_decay", "momentum_decay",
            "decoupled_weight_decay", "maximize"),
    number_names=("direction", "wd", "decay", "w", "beta2", "cb2", "eps"),
    numbers=lambda k: {"direction": _direction(k), "wd": k["weight_decay"],
                       "decay": 1 - k["lr"] * k["weight_decay"], "w": 1 - k["beta1"],
                       "beta2": k["beta2"], "cb2": 1 - k["beta2"], "eps": k["eps"]},
    flags=_decoupled_flags,
    per_tensor=_nadam_per_tensor,
    per_tensor_names=("bc2", "gval", "mval"),
    statements=(
        *_grad(decoupled=True),
        *_lerp("", "m", "g", "w"),
        ("", "v", "v * beta2"),
        ("", "v", "v + cb2 * g * g"),
        ("", "denom", "sqrt(v / bc2)"),
        ("", "denom", "denom + eps"),
        ("", "p", "p + gval * g / denom"),
        ("", "p", "p + mval * m / denom"),
    ),
    doc="One NAdam step of every parameter of ``self``, in place (``state_steps`` counted "
        "and ``mu_products`` multiplied by this step's mu already).")


def _radam_per_tensor(s: dict[str, list[float]], k: dict[str, Any]) -> dict[str, list[float]]:
    beta1, beta2 = k["beta1"], k["beta2"]
    rho_inf = 2 / (1 - beta2) - 1
    out: dict[str, list[float]] = {"bc1": [], "bc2_sqrt": [], "rect": [], "rectified": []}
    for step in s["state_steps"]:
        bc2 = 1 - beta2 ** step
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bc2
        rectified = rho_t > 5.0
        out["bc1"].append(1 - beta1 ** step)
        out["bc2_sqrt"].append(bc2 ** 0.5)
        out["rect"].append(((rho_t - 4) * (rho_t - 2) * rho_inf
                            / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                           if rectified else 0.0)
        out["rectified"].append(float(rectified))
    return out


RADAM = Step(
    name="_fused_radam_",
    operands=(Operand("self", "p", True), Operand("grads", "g"),
              Operand("exp_avgs", "m", True), Operand("exp_avg_sqs", "v", True)),
    scalar_lists=("state_steps",),
    params=("lr", "beta1", "beta2", "eps", "weight_decay", "decoupled_weight_decay",
            "maximize"),
    number_names=("direction", "wd", "decay", "w", "beta2", "cb2", "eps", "lr"),
    numbers=lambda k: {"direction": _direction(k), "wd": k["weight_decay"],
                       "decay": 1 - k["lr"] * k["weight_decay"], "w": 1 - k["beta1"],
                       "beta2": k["beta2"], "cb2": 1 - k["beta2"], "eps": k["eps"],
                       "lr": k["lr"]},
    flags=_decoupled_flags,
    per_tensor=_radam_per_tensor,
    per_tensor_names=("bc1", "bc2_sqrt", "rect", "rectified"),
    statements=(
        *_grad(decoupled=True),
        *_lerp("", "m", "g", "w"),
        ("", "v", "v * beta2"),
        ("", "v", "v + cb2 * g * g"),
        ("", "corrected", "m / bc1"),
        ("", "update", "corrected * lr"),
        ("", "adaptive", "bc2_sqrt / (sqrt(v) + eps)"),
        ("", "update", "where(rectified > 0, update * adaptive * rect, update)"),
        ("", "p", "p - update"),                            # param.add_(update, alpha=-1.0)
    ),
    doc="One RAdam step of every parameter of ``self``, in place (``state_steps`` counted "
        "already).")


def _asgd_per_tensor(s: dict[str, list[float]], k: dict[str, Any]) -> dict[str, list[float]]:
    return {"decay": [1 - k["lambd"] * eta for eta in s["etas"]],
            "neg_eta": [-eta for eta in s["etas"]], "mu": s["mus"],
            "averages": [float(mu != 1) for mu in s["mus"]]}


ASGD = Step(
    name="_fused_asgd_",
    operands=(Operand("self", "p", True), Operand("grads", "g"), Operand("axs", "ax", True)),
    scalar_lists=("mus", "etas"),
    params=("lambd", "weight_decay", "maximize"),
    number_names=("direction", "wd"),
    numbers=lambda k: {"direction": _direction(k), "wd": k["weight_decay"]},
    flags=lambda k: {"l2": k["weight_decay"] != 0},
    per_tensor=_asgd_per_tensor,
    per_tensor_names=("decay", "neg_eta", "mu", "averages"),
    statements=(
        *_grad(),
        ("", "p", "p * decay"),                             # param.mul_(1 - lambd * eta)
        ("", "p", "fma(g, neg_eta, p)"),                    # param.add_(grad, alpha=-eta)
        ("", "ax", "where(averages > 0, ax + (p - ax) * mu, p)"),
    ),
    doc="One ASGD step of every parameter of ``self``, in place, with each tensor's ``eta`` "
        "and ``mu`` before this step (the caller updates them after).")

RPROP = Step(
    name="_fused_rprop_",
    operands=(Operand("self", "p", True), Operand("grads", "g"), Operand("prevs", "prev", True),
              Operand("step_sizes", "size", True)),
    params=("etaminus", "etaplus", "step_size_min", "step_size_max", "maximize"),
    number_names=("direction", "etaminus", "etaplus", "smallest", "largest"),
    numbers=lambda k: {"direction": _direction(k), "etaminus": k["etaminus"],
                       "etaplus": k["etaplus"], "smallest": k["step_size_min"],
                       "largest": k["step_size_max"]},
    flags=lambda k: {},
    statements=(
        ("", "g", "direction * g"),
        ("", "s", "sign(g * prev)"),
        ("", "s", "where(s > 0, etaplus, where(s < 0, etaminus, 1))"),
        ("", "size", "clamp(size * s, smallest, largest)"),
        ("", "g", "where(s == etaminus, 0, g)"),
        ("", "p", "p + -1 * sign(g) * size"),               # addcmul_(grad.sign(), size, -1)
        ("", "prev", "g"),
    ),
    doc="One Rprop step of every parameter of ``self``, in place.")

STEPS = [RMSPROP, ADADELTA, ADAMAX, NADAM, RADAM, ASGD, RPROP]
FUNCTIONS = [step.name for step in STEPS]
METHODS: dict[str, Any] = {}
_fused_rmsprop_, _fused_adadelta_, _fused_adamax_, _fused_nadam_, _fused_radam_, \
    _fused_asgd_, _fused_rprop_ = (register_step(step) for step in STEPS)

from . import fused_steps_native  # noqa: E402

NATIVE = fused_steps_native.install(STEPS)
