"""Tests for replicate.models: parameter counts from the architecture definitions and
published counts, output shapes, the features/fc contract, initialisation, speed."""
from __future__ import annotations


import numpy as np
import pytest
import torch

import replicate as rp
from replicate.models import count_parameters, get_model


@pytest.fixture(autouse=True)
def one_thread():
    """One intra-op thread: far faster and steadier than two on a shared, loaded 2-core box."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


# --- independent parameter counts, derived by hand from the architecture definitions ---
def conv(k, cin, cout):
    return k * k * cin * cout


def bn(c):
    return 2 * c


def linear(cin, cout):
    return cin * cout + cout


def bottleneck_resnet_count(blocks, k):
    """He et al. bottleneck blocks, CIFAR 4-stage layout (PROTOCOL.md), projection shortcuts."""
    total, cin = conv(3, 3, 64) + bn(64), 64
    for planes, n, stride in zip((64, 128, 256, 512), blocks, (1, 2, 2, 2)):
        for i in range(n):
            out = 4 * planes
            total += conv(1, cin, planes) + bn(planes) + conv(3, planes, planes) + bn(planes)
            total += conv(1, planes, out) + bn(out)
            if cin != out or (i == 0 and stride != 1):
                total += conv(1, cin, out) + bn(out)
            cin = out
    return total + linear(2048, k)


def he_cifar_resnet_count(n, k, w=16):
    """He et al. Sec. 4.2: 6n+2 layers, option-A (parameter-free) shortcuts."""
    total, cin = conv(3, 3, w) + bn(w), w
    for planes in (w, 2 * w, 4 * w):
        for _ in range(n):
            total += conv(3, cin, planes) + bn(planes) + conv(3, planes, planes) + bn(planes)
            cin = planes
    return total + linear(4 * w, k)


def wrn_count(depth, width, k):
    n = (depth - 2) // 6
    total, cin = conv(3, 3, 16) + bn(16), 16
    for planes in (16 * width, 32 * width, 64 * width):
        for i in range(n):
            total += conv(3, cin, planes) + bn(planes) + conv(3, planes, planes) + bn(planes)
            if i == 0:  # every first block changes the width (16 -> 160 included): projection
                total += conv(1, cin, planes) + bn(planes)
            cin = planes
    return total + linear(64 * width, k)


def densenet_count(blocks, g, k):
    c = 2 * g
    total = conv(3, 3, c)
    for i, n in enumerate(blocks):
        for _ in range(n):
            total += bn(c) + conv(1, c, 4 * g) + bn(4 * g) + conv(3, 4 * g, g)
            c += g
        if i < len(blocks) - 1:
            total += bn(c) + conv(1, c, c // 2)
            c //= 2
    return total + bn(c) + linear(c, k)


def text_cnn_count(vocab, e, k, ch=128, h=128):
    return vocab * e + (5 * e * ch + ch) + 2 * (5 * ch * ch + ch) + linear(ch, h) + linear(h, k)


@pytest.mark.parametrize("name,k,expected", [
    ("resnet50", 10, bottleneck_resnet_count((3, 4, 6, 3), 10)),
    ("resnet50", 100, bottleneck_resnet_count((3, 4, 6, 3), 100)),
    ("resnet110", 10, bottleneck_resnet_count((3, 4, 26, 3), 10)),
    ("wide_resnet26_10", 10, wrn_count(26, 10, 10)),
    ("densenet121", 10, densenet_count((6, 12, 24, 16), 32, 10)),
    ("resnet8", 10, he_cifar_resnet_count(1, 10)),
    ("resnet20", 10, he_cifar_resnet_count(3, 10)),
])
def test_parameter_counts_match_architecture(name, k, expected):
    assert count_parameters(get_model(name, k)) == expected


def test_parameter_counts_match_published_values():
    # kuangliu/pytorch-cifar README (the layout Mukhoti et al. copied): ResNet50 23,520,842,
    # ResNet101 [3,4,23,3] 42,512,970, DenseNet121 6,956,298 (10 classes).
    assert count_parameters(get_model("resnet50", 10)) == 23_520_842
    assert count_parameters(get_model("densenet121", 10)) == 6_956_298
    # ResNet-110 = ResNet-101 + 3 more 1024-channel bottlenecks in stage 3.
    extra = 3 * (conv(1, 1024, 256) + conv(3, 256, 256) + conv(1, 256, 1024) + bn(256) * 2 + bn(1024))
    assert count_parameters(get_model("resnet110", 10)) == 42_512_970 + extra
    # He et al. (2016) Table 6: ResNet-20 0.27M; the option-A count is 269,722.
    assert count_parameters(get_model("resnet20", 10)) == 269_722
    # WRN-26-10 in the reference code's post-activation form: ~36.5M (WRN-28-10 is 36.5M).
    assert 36.0e6 < count_parameters(get_model("wide_resnet26_10", 10)) < 37.0e6


def test_text_cnn_parameter_count_and_shape():
    m = get_model("text_cnn", 20, vocab_size=1000, embed_dim=100)
    assert count_parameters(m) == text_cnn_count(1000, 100, 20)
    m.eval()
    tokens = torch.randint(0, 1000, (3, 50))
    out = m(tokens)
    assert out.shape == (3, 20)
    assert torch.allclose(out, m.fc(m.features(tokens)))
    with pytest.raises(ValueError, match="L >= 21"):
        m(torch.zeros(2, 20, dtype=torch.long))


def test_text_cnn_frozen_pretrained_embedding():
    emb = torch.randn(50, 8)
    m = get_model("text_cnn", 4, vocab_size=50, embed_dim=8, embedding=emb, freeze_embedding=True)
    assert torch.equal(m.embedding.weight, emb)
    assert not m.embedding.weight.requires_grad
    assert count_parameters(m, trainable_only=True) == count_parameters(m) - 50 * 8


def test_text_cnn_pretrained_vectors_are_frozen_by_default_and_get_no_gradient():
    """As the reference, whose optimiser never sees the GloVe embedding module."""
    vectors = np.random.default_rng(0).normal(size=(30, 6)).astype(np.float32)
    m = get_model("text_cnn", 3, vocab_size=30, embed_dim=6, embedding=vectors, channels=4, hidden=4)
    assert not m.embedding.weight.requires_grad
    assert torch.equal(m.embedding.weight, torch.from_numpy(vectors))
    m(torch.randint(0, 30, (2, 25))).sum().backward()
    assert m.embedding.weight.grad is None and m.conv1.weight.grad is not None
    assert get_model("text_cnn", 3, vocab_size=30, embed_dim=6).embedding.weight.requires_grad  # no vectors
    with pytest.raises(ValueError, match=r"embedding must have shape \(30, 8\)"):
        get_model("text_cnn", 3, vocab_size=30, embed_dim=8, embedding=vectors)


@pytest.mark.parametrize("name", ["resnet50", "resnet110", "resnet18", "wide_resnet26_10", "densenet121",
                                  "resnet8", "resnet20", "tiny_cnn"])
def test_forward_shape_and_features_contract(name):
    torch.manual_seed(0)
    m = get_model(name, 7).eval()
    x = torch.randn(2, 3, 32, 32)
    with torch.no_grad():
        out = m(x)
        feats = m.features(x)
    assert out.shape == (2, 7)
    assert isinstance(m.fc, torch.nn.Linear) and m.fc.out_features == 7
    assert feats.shape == (2, m.fc.in_features)
    assert torch.allclose(out, m.fc(feats), atol=1e-6)


def test_option_a_shortcut_is_subsample_and_zero_padding():
    block = get_model("resnet20", 10).layer2[0]  # 16 -> 32 channels, stride 2
    x = torch.randn(2, 16, 8, 8)
    s = block.shortcut(x)
    assert s.shape == (2, 32, 4, 4)
    assert torch.equal(s[:, 8:24], x[:, :, ::2, ::2])
    assert s[:, :8].abs().sum() == 0 and s[:, 24:].abs().sum() == 0


def test_wide_resnet_he_fan_out_init():
    torch.manual_seed(0)
    m = get_model("wide_resnet26_10", 10)
    w = m.layer3[1].conv1.weight  # 640 x 640 x 3 x 3
    expected = (2.0 / (9 * 640)) ** 0.5
    assert abs(w.std().item() / expected - 1) < 0.01
    assert torch.all(m.layer3[1].bn1.weight == 1) and torch.all(m.layer3[1].bn1.bias == 0)


def test_densenet_layer_concatenates_new_features_first():
    layer = get_model("densenet121", 10).stages[0][0]
    x = torch.randn(1, 64, 4, 4)
    layer.eval()
    out = layer(x)
    assert out.shape == (1, 96, 4, 4)
    assert torch.equal(out[:, 32:], x)


def test_get_model_errors():
    with pytest.raises(ValueError, match="resnet50"):
        get_model("resnet34", 10)
    with pytest.raises(ValueError, match="vocab_size"):
        get_model("text_cnn", 20)
    with pytest.raises(ValueError, match="num_classes"):
        get_model("tiny_cnn", 1)
    with pytest.raises(ValueError, match="bad keyword"):
        get_model("resnet50", 10, width=3)
    assert set(rp.models.MODELS) == {"resnet50", "resnet110", "wide_resnet26_10", "densenet121",
                                     "resnet18", "resnet8", "resnet20", "tiny_cnn", "text_cnn"}


def test_resnet18_is_torchvisions_resnet18_with_a_cifar_stem():
    """Oracle: torchvision's resnet18 with a 3x3 stride-1 stem and no max-pool has the same
    parameters in the same order; copied over, both compute the same function."""
    import torchvision
    torch.manual_seed(0)
    ours = get_model("resnet18", 10).eval()
    ref = torchvision.models.resnet18(num_classes=10)
    ref.conv1 = torch.nn.Conv2d(3, 64, 3, stride=1, padding=1, bias=False)
    ref.maxpool = torch.nn.Identity()
    ref.eval()
    assert count_parameters(ours) == count_parameters(ref) == 11_173_962
    ref_state = ref.state_dict()
    assert [v.shape for v in ours.state_dict().values()] == [v.shape for v in ref_state.values()]
    ours.load_state_dict(dict(zip(ours.state_dict(), ref_state.values())))
    x = torch.randn(3, 3, 32, 32)
    with torch.no_grad():
        assert torch.allclose(ours(x), ref(x), atol=1e-5)
