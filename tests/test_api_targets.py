"""The tensor-level names of shared/TORCH-API-TARGETS.md, each used the way public programs
(nanoGPT, minGPT, micrograd, pytorch/examples) use it, run with Ember and with torch."""

import numpy as np
import pytest
import torch

import ember


def both(program):
    """Run ``program(lib)`` with ember and torch; compare every returned value."""
    got, want = program(ember), program(torch)
    for g, w in zip(got, want, strict=True):
        if isinstance(w, torch.Tensor):
            assert str(g.dtype) == str(w.dtype), (g.dtype, w.dtype)
            assert tuple(g.shape) == tuple(w.shape)
            np.testing.assert_allclose(np.asarray(g.detach().float()), w.detach().float().numpy(),
                                       rtol=1e-5, atol=1e-6)
        else:
            assert g == w, (g, w)


def _data(lib, *shape, seed=0):
    return lib.tensor(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


def test_constructors_and_top_level_math():
    def program(lib):
        x = _data(lib, 2, 3)
        return (lib.Tensor([1, 2]), lib.LongTensor([3, 4]), lib.tensor([1, 2], dtype=lib.float),
                lib.from_numpy(np.arange(3)), lib.arange(0, 10, 3, dtype=lib.long),
                lib.zeros(2, 2), lib.ones(3), lib.tril(lib.ones(3, 3)),
                lib.cat([x, x], dim=1), lib.stack([x, x]), lib.flatten(x, 1),
                lib.exp(x), lib.log(x.abs()), lib.sin(x), lib.cos(x), lib.tanh(x),
                lib.pow(x, 2), lib.sigmoid(x), lib.sum(x), lib.softmax(x, dim=-1),
                lib.topk(x, 2).values, lib.topk(x, 2).indices)

    both(program)


def test_operators_and_reflected_forms():
    def program(lib):
        x, y = _data(lib, 3, 4), _data(lib, 4, 5, seed=1)
        mask = x > 0
        return (x + 1, 1 + x, x - 2, 2 - x, x * 3, 2 * x, x / 4, 10.0 / (x.abs() + 1), x ** 2,
                -x, x @ y, x > 0.5, x == x, ~mask, mask & (x < 1), x.eq(x))

    both(program)


def test_gpt_style_indexing():
    def program(lib):
        att = _data(lib, 2, 3, 4, 4)
        T = 3
        bias = lib.tril(lib.ones(4, 4)).view(1, 1, 4, 4)
        att = att[:, :, :T, :T].masked_fill(bias[:, :, :T, :T] == 0, float("-inf"))
        logits = _data(lib, 2, 5, 7)
        last = logits[:, -1, :]
        kept = logits[:, [-1], :]
        v, _ = lib.topk(last, 3)
        last = last.clone()
        last[last < v[:, [-1]]] = -float("inf")
        pe = lib.zeros(5, 6)
        pos = lib.arange(0, 5, dtype=lib.float).unsqueeze(1)
        div = lib.exp(lib.arange(0, 6, 2).float() * (-np.log(10000.0) / 6))
        pe[:, 0::2] = lib.sin(pos * div)
        pe[:, 1::2] = lib.cos(pos * div)
        return att, last, kept, pe, pe[None, ...]

    both(program)


def test_tensor_methods():
    def program(lib):
        x = _data(lib, 4, 6)
        h = x.new_zeros(2, 3)
        out = x.view(2, 12).view_as(x).reshape(6, 4).transpose(0, 1).t().contiguous()
        parts = x.split(2, dim=1)
        return (x.size(), x.size(1), x.dim(), x.numel(), x.nelement(), out, parts[0], parts[2],
                x.narrow(1, 1, 2), x.unsqueeze(0), x.unsqueeze(0).squeeze(), x.flip(0),
                x.argmax(1, keepdim=True), x.sum(0), x.mean(), x.pow(2), x.abs().sqrt(),
                x.relu(), x.exp(), x.add(x), x.div(2), x.double(), x.float(), x.long(),
                x.type(lib.float64), x.to("cpu", non_blocking=True), x.cpu(), h,
                x[0, 0].item(), x[:2, :2].tolist(), x.shape, x.ndim)

    both(program)


def test_tensor_has_no_public_attribute_torch_lacks():
    # a program written against Ember must run on torch: x.rsub(y) is an AttributeError there
    extra = {n for n in dir(ember.Tensor) if not n.startswith("_")} - set(dir(torch.Tensor))
    assert not extra
    with pytest.raises(AttributeError):
        ember.tensor(1.0).rsub  # noqa: B018
    assert ember.rsub(ember.tensor(3.0), 1.0).item() == torch.rsub(torch.tensor(3.0), 1.0).item()


def test_in_place_and_data_attribute():
    def program(lib):
        x = _data(lib, 3)
        y = lib.zeros(3)
        y.copy_(x)
        y.add_(x, alpha=0.5)
        z = lib.empty(2).fill_(7.0)
        w = lib.ones(2)
        w.zero_()
        p = lib.ones(3, requires_grad=True)
        with lib.no_grad():
            p.data = p.data * 2
        return y, z, w, p.detach(), p.requires_grad, p.is_leaf

    both(program)


def test_backward_and_grad_attributes():
    def program(lib):
        w = _data(lib, 3, 2)
        w.requires_grad = True
        x = _data(lib, 4, 3, seed=2)
        loss = (x @ w).relu().sum()
        loss.backward()
        grad = w.grad.clone()
        w.grad = None
        return grad, w.grad is None, loss.detach(), loss.requires_grad

    both(program)


lib_params = pytest.mark.parametrize("lib", [ember, torch], ids=["ember", "torch"])


@lib_params
def test_no_grad_as_decorator(lib):
    @lib.no_grad()
    def double(t):
        return t * 2

    assert not double(lib.ones(2, requires_grad=True)).requires_grad


@lib_params
def test_seeding_and_generators(lib):
    lib.manual_seed(1337)
    a = lib.randn(3)
    lib.manual_seed(1337)
    assert lib.equal(a, lib.randn(3))
    g = lib.Generator().manual_seed(0)
    perm = lib.randperm(10, generator=g)
    assert sorted(perm.tolist()) == list(range(10))
    idx = lib.multinomial(lib.tensor([0.0, 1.0, 0.0]), num_samples=2, replacement=True)
    assert idx.tolist() == [1, 1]
    r = lib.randint(0, 5, (4,), dtype=lib.long)
    assert r.dtype == lib.int64 and r.shape == (4,)
    assert lib.randn_like(a).shape == a.shape



def _nn_program(lib, states=None):
    """The nn section's names, each module built as the programs build it (with torch's
    weights loaded through the state dict when ``states`` are given) and run on the same
    inputs, then the functional calls with the programs' keywords."""
    nn, F = lib.nn, lib.nn.functional
    x = _data(lib, 2, 5, 8)
    tokens = lib.tensor([[1, 2, 3, 0, 4], [4, 3, 2, 1, 0]])
    modules = [nn.Linear(8, 6, bias=False), nn.Embedding(5, 8), nn.LayerNorm(8),
               nn.Dropout(0.0), nn.GELU(), nn.RNN(8, 6, nonlinearity="relu"),
               nn.LSTM(8, 6), nn.GRU(8, 6), nn.MultiheadAttention(8, 2),
               nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, 0.0), 2,
                                     enable_nested_tensor=False),
               nn.Transformer(8, 2, 1, 1, 16, 0.0), nn.Conv2d(2, 3, 3),
               nn.ModuleList([nn.Linear(8, 8)]), nn.ModuleDict({"a": nn.Linear(8, 8)})]
    nn.init.normal_(modules[0].weight, mean=0.0, std=0.02)
    nn.init.zeros_(modules[11].bias)
    nn.init.ones_(modules[2].weight)
    nn.init.uniform_(modules[1].weight)
    if states is not None:
        for m, state in zip(modules, states):
            m.load_state_dict({k: lib.tensor(v.numpy()) for k, v in state.items()})
    img = _data(lib, 1, 2, 6, 6)
    logp = F.log_softmax(x.view(10, 8), dim=-1)
    target = lib.tensor([0, 1, 2, 3, 4, 5, 6, 7, 0, -100])
    out = [modules[0](x), modules[1](tokens), modules[2](x), modules[3](x), modules[4](x),
           modules[5](x)[0], modules[6](x)[1][1], modules[7](x)[0], modules[8](x, x, x)[0],
           modules[9](x), modules[10](x, x[:1]), modules[11](img),
           modules[12][0](x), modules[13]["a"](x),
           F.max_pool2d(img, 2), F.relu(x), F.softmax(x, dim=-1),
           F.layer_norm(x, (8,), lib.ones(8), lib.zeros(8), 1e-5),
           F.cross_entropy(x.view(10, 8), target, ignore_index=-100),
           nn.NLLLoss()(logp, target.clamp(min=0)), F.nll_loss(logp, target, reduction="sum"),
           F.binary_cross_entropy(lib.sigmoid(x), (x > 0).float(), reduction="mean"),
           F.scaled_dot_product_attention(x, x, x, attn_mask=None, dropout_p=0.0,
                                          is_causal=True)]
    return out, [m.state_dict() for m in modules]


def test_nn_names_as_the_programs_use_them():
    want, states = _nn_program(torch)
    got, ember_states = _nn_program(ember, states)
    assert [list(s) for s in ember_states] == [list(s) for s in states]
    for g, w in zip(got, want, strict=True):
        assert str(g.dtype) == str(w.dtype) and tuple(g.shape) == tuple(w.shape)
        np.testing.assert_allclose(g.detach().numpy(), w.detach().numpy(), rtol=1e-5,
                                   atol=1e-6)
    assert ember.nn.utils.clip_grad_norm_ and ember.nn.Parameter


def _nanogpt_optimizer(lib, model):
    """nanoGPT's configure_optimizers: AdamW over two groups with their own weight decay,
    ``fused`` looked up in the signature, then training steps with the lr written into the
    groups, a StepLR, gradient clipping and a GradScaler that is off (as on a CPU)."""
    import inspect

    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}]
    fused = "fused" in inspect.signature(lib.optim.AdamW).parameters
    opt = lib.optim.AdamW(groups, lr=6e-4, betas=(0.9, 0.95), fused=False)
    sched = lib.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    scaler = lib.cuda.amp.GradScaler(enabled=False)
    x = _data(lib, 4, 8)
    losses = []
    for it in range(4):
        for group in opt.param_groups:
            group["lr"] = 6e-4 * (it + 1) / 4
        with lib.amp.autocast(device_type="cpu", dtype=lib.bfloat16, enabled=False):
            loss = model(x).pow(2).mean()
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        lib.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)
        sched.step()
        losses.append(loss.item())
    state = opt.state_dict()
    opt.load_state_dict(state)
    adadelta = lib.optim.Adadelta(model.parameters(), lr=1.0)
    adam = lib.optim.Adam(model.parameters(), lr=1e-3)
    return fused, losses, sched.get_last_lr(), sorted(state["state"][0]), \
        [type(o).__name__ for o in (adadelta, adam)]


def test_optim_names_as_the_programs_use_them():
    torch_model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.GELU(),
                                      torch.nn.Linear(8, 2))
    ember_model = ember.nn.Sequential(ember.nn.Linear(8, 8), ember.nn.GELU(),
                                      ember.nn.Linear(8, 2))
    ember_model.load_state_dict({k: ember.tensor(v.numpy())
                                 for k, v in torch_model.state_dict().items()})
    want = _nanogpt_optimizer(torch, torch_model)
    got = _nanogpt_optimizer(ember, ember_model)
    assert got[0] == want[0] and got[2:] == want[2:]
    np.testing.assert_allclose(got[1], want[1], rtol=1e-5)
