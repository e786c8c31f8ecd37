import pytest
import torch
from torch import nn

from fedlab.models import (MLP, LinearModel, ModuleModel, SmallCNN, check_model, check_param_dict, check_params,
                           init_stacked)

torch.set_default_dtype(torch.float32)


def _models():
    return [LinearModel(6, 4), LinearModel(6, 1, loss="mse"), MLP(6, (8, 5), 4),
            ModuleModel(lambda: nn.Sequential(nn.Linear(6, 7), nn.Tanh(), nn.Linear(7, 4)))]


@pytest.mark.parametrize("model", _models(), ids=repr)
def test_forward_stacked_equals_per_row_forward(model):
    params = init_stacked(model, 3, torch.Generator().manual_seed(0), same=False)
    x = torch.randn(3, 5, 6)
    out = model.forward_stacked(params, x)
    for r in range(3):
        row = model.forward({k: v[r] for k, v in params.items()}, x[r])
        torch.testing.assert_close(out[r], row, rtol=1e-5, atol=1e-6)


def test_cnn_forward_stacked_equals_forward():
    model = SmallCNN(1, 8, 10, channels=(4, 6))
    params = init_stacked(model, 2, torch.Generator().manual_seed(0), same=False)
    x = torch.rand(2, 3, 1, 8, 8)
    out = model.forward_stacked(params, x)
    assert out.shape == (2, 3, 10)
    torch.testing.assert_close(out[1], model.forward({k: v[1] for k, v in params.items()}, x[1]))


@pytest.mark.parametrize("loss", ["cross_entropy", "mse"])
@pytest.mark.parametrize("weighted", [False, True])
def test_linear_closed_form_gradient_matches_autograd(loss, weighted):
    model = LinearModel(6, 4 if loss == "cross_entropy" else 1, loss=loss)
    params = init_stacked(model, 3, torch.Generator().manual_seed(1), same=False)
    x = torch.randn(3, 8, 6)
    y = torch.randint(0, 4, (3, 8)) if loss == "cross_entropy" else torch.randn(3, 8)
    w = torch.rand(3, 8) if weighted else None
    loss_cf, grads_cf = model.loss_and_grad_stacked(params, x, y, w)
    loss_ag, grads_ag = super(LinearModel, model).loss_and_grad_stacked(params, x, y, w)
    torch.testing.assert_close(loss_cf.float(), loss_ag.float(), rtol=1e-5, atol=1e-6)
    for a, b in zip(grads_cf, grads_ag):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)


def test_linear_matches_nn_linear_layout():
    model = LinearModel(3, 2)
    params = model.init(torch.Generator().manual_seed(0))
    layer = nn.Linear(3, 2)
    with torch.no_grad():
        layer.weight.copy_(params["weight"]), layer.bias.copy_(params["bias"])
    x = torch.randn(4, 3)
    torch.testing.assert_close(model.forward(params, x), layer(x))


def test_init_is_deterministic_and_zero_init():
    a = MLP(4, (3,), 2).init(torch.Generator().manual_seed(5))
    b = MLP(4, (3,), 2).init(torch.Generator().manual_seed(5))
    assert all(torch.equal(a[k], b[k]) for k in a)
    z = LinearModel(4, 2, zero_init=True).init(torch.Generator().manual_seed(0))
    assert all(float(v.abs().sum()) == 0 for v in z.values())


def test_init_stacked_same_rows():
    p = init_stacked(LinearModel(3, 2), 4, torch.Generator().manual_seed(0))
    assert p["weight"].shape == (4, 2, 3) and torch.equal(p["weight"][0], p["weight"][3])


@pytest.mark.parametrize("bad", [dict(in_features=0, out_features=2), dict(in_features=3, out_features=-1),
                                 dict(in_features=3, out_features=2, loss="hinge"),
                                 dict(in_features=2.5, out_features=2)])
def test_bad_model_arguments(bad):
    with pytest.raises((ValueError, TypeError)):
        LinearModel(**bad)


def test_module_model_rejects_non_module():
    with pytest.raises(TypeError, match="nn.Module"):
        ModuleModel(lambda: 3)
    with pytest.raises(TypeError, match="callable"):
        ModuleModel(3)


def test_signature_is_hashable_and_distinguishes_shapes():
    assert hash(LinearModel(3, 2).signature()) is not None
    assert LinearModel(3, 2).signature() != LinearModel(4, 2).signature()


def test_models_describe_their_inputs_outputs_and_parameter_shapes():
    lin, mlp, cnn = LinearModel(5, 3), MLP(4, (6,), 2), SmallCNN(1, 8, 10)
    assert (lin.n_inputs(), lin.n_outputs(), mlp.n_inputs(), mlp.n_outputs()) == (5, 3, 4, 2)
    assert (cnn.n_inputs(), cnn.n_outputs()) == (64, 10)
    assert lin.param_shapes() == {"weight": (3, 5), "bias": (3,)}
    lin.check_features((5,))
    cnn.check_features((1, 8, 8))
    with pytest.raises(ValueError, match=r"data has samples of shape \(4,\) \(4 features\) .* takes 5 input"):
        lin.check_features((4,))
    module = ModuleModel(lambda: nn.Linear(3, 2))
    assert module.n_inputs() is None and module.param_shapes() == {"weight": (2, 3), "bias": (2,)}
    module.check_features((3,))
    with pytest.raises(ValueError, match="train"):
        module.check_features((4,), "train")


def test_check_model_and_parameter_dicts():
    model = LinearModel(5, 3)
    assert check_model(model) is model
    with pytest.raises(TypeError, match="model must be a Model"):
        check_model("linear")
    stacked = init_stacked(model, 2, torch.Generator().manual_seed(0))
    assert check_param_dict("params", stacked) == 2 and check_param_dict("p", {}, nonempty=False) is None
    assert check_params(model, stacked, rows=2) is stacked
    assert check_params(model, model.init(torch.Generator().manual_seed(0)), stacked=False)
    bad = {k: v.clone() for k, v in stacked.items()}
    bad["bias"][0, 0] = float("nan")
    for params, kwargs, match in [({}, {}, "params must hold at least one"),
                                  (bad, {}, r"params must be finite; \['bias'\]"),
                                  ({"w": torch.zeros(2, dtype=torch.long)}, {}, "must be a float tensor"),
                                  ({"a": torch.zeros(2, 1), "b": torch.zeros(3, 1)}, {}, "the same number of rows"),
                                  (stacked, {"rows": 3}, "must have 3 rows")]:
        with pytest.raises(ValueError, match=match):
            check_param_dict("params", params, **kwargs)
    with pytest.raises(ValueError, match=r"params must hold the parameters \['bias', 'weight'\]"):
        check_params(model, {"weight": stacked["weight"]})
    with pytest.raises(ValueError, match="expects"):
        check_params(LinearModel(4, 3), stacked)


def test_paper_modules_give_a_representation_and_the_same_logits():
    from fedlab.models import char_lstm, cifar_cnn

    for model, x in ((cifar_cnn(10), torch.rand(3, 3, 32, 32)), (char_lstm(100), torch.randint(0, 100, (3, 7)).float())):
        params = model.init(torch.Generator().manual_seed(0))
        emb, logits = model.features(params, x)
        assert emb.shape == (3, model.feature_dim) and model.n_outputs() == logits.shape[1]
        torch.testing.assert_close(logits, model.forward(params, x))
    plain = ModuleModel(lambda: nn.Linear(4, 2))
    assert plain.feature_dim is None and plain.n_outputs() is None
    with pytest.raises(TypeError, match="no representation"):
        plain.features(plain.init(torch.Generator().manual_seed(0)), torch.zeros(1, 4))


@pytest.mark.parametrize("model", _models(), ids=repr)
def test_rows_sharing_a_minibatch_take_it_once(model):
    """copies = c: x and y hold one minibatch per c consecutive rows; the result is that of the repeated batch."""
    c, groups = 3, 2
    params = init_stacked(model, c * groups, torch.Generator().manual_seed(2), same=False)
    x = torch.randn(groups, 5, 6)
    y = torch.randint(0, 4, (groups, 5)) if model.loss_name == "cross_entropy" else torch.randn(groups, 5)
    w = torch.rand(c * groups, 5)
    loss, grads = model.loss_and_grad_stacked(params, x, y, w, copies=c)
    loss_rep, grads_rep = model.loss_and_grad_stacked(params, x.repeat_interleave(c, 0), y.repeat_interleave(c, 0), w)
    torch.testing.assert_close(loss, loss_rep, rtol=1e-6, atol=1e-7)
    for a, b in zip(grads, grads_rep):
        torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-7)
