import json
import math

import pytest
import torch

from helpers import (get_device, get_profile, load_images, load_mushroom, save_results,
                     load_results, seed_everything, verify_checksums, savefig, results_dir)
from helpers.data import data_dir


def test_data_dir_resolution(monkeypatch, tmp_path):
    monkeypatch.setenv("BBB_DATA_DIR", str(tmp_path))
    assert data_dir() == tmp_path.resolve()
    assert data_dir(tmp_path / "x") == (tmp_path / "x").resolve()
    monkeypatch.delenv("BBB_DATA_DIR")
    assert data_dir().name == "data"


def test_missing_data_error_names_path(tmp_path):
    with pytest.raises(FileNotFoundError) as err:
        load_images("MNIST", data_dir_=tmp_path, download=False)
    assert str(tmp_path) in str(err.value) and "BBB_DATA_DIR" in str(err.value)
    with pytest.raises(FileNotFoundError, match="agaricus"):
        load_mushroom(tmp_path, download=False)
    with pytest.raises(ValueError, match="unknown image data set"):
        load_images("CIFAR", data_dir_=tmp_path)


def test_shared_data_checksums(shared_data):
    checked = verify_checksums(shared_data)
    assert len(checked) >= 10


def test_mnist_shapes_labels_split(shared_data):
    d = load_images("MNIST", data_dir_=shared_data, download=False)
    assert d.x_train.shape == (50_000, 784) and d.x_val.shape == (10_000, 784)
    assert d.x_test.shape == (10_000, 784) and d.x_train.dtype == torch.float32
    assert d.y_train[:10].tolist() == [5, 0, 4, 1, 9, 2, 1, 3, 1, 4]
    assert d.x_train.max().item() == pytest.approx(255 / 126)  # the paper's /126
    assert set(d.y_test.unique().tolist()) == set(range(10))
    unit = load_images("MNIST", data_dir_=shared_data, scale="unit", n_train=1000, download=False)
    assert unit.x_train.shape == (1000, 784) and unit.x_train.max().item() == pytest.approx(1.0)
    # training pixel statistics quoted by the data README
    full = torch.cat([d.x_train, d.x_val]) * 126 / 255
    assert full.mean().item() == pytest.approx(0.1307, abs=1e-3)
    with pytest.raises(ValueError, match="scale"):
        load_images("MNIST", data_dir_=shared_data, scale="zscore")


def test_fashion_and_mushroom(shared_data):
    f = load_images("FashionMNIST", data_dir_=shared_data, download=False, n_val=0)
    assert f.x_train.shape == (60_000, 784)
    x, poison = load_mushroom(shared_data, download=False)
    assert x.shape[0] == 8124 and poison.sum().item() == 3916
    assert torch.all(x.sum(1) == 22)  # one category per attribute


def test_a_test_set_alone_is_read_without_its_training_files(shared_data, tmp_path):
    from helpers import load_test_images
    raw = tmp_path / "FashionMNIST" / "raw"
    raw.mkdir(parents=True)
    for f in ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"):
        (raw / f).symlink_to(shared_data / "FashionMNIST" / "raw" / f)
    x, y = load_test_images("FashionMNIST", data_dir_=tmp_path, download=False)
    full = load_images("FashionMNIST", data_dir_=shared_data, download=False)
    assert torch.equal(x, full.x_test) and torch.equal(y, full.y_test)
    with pytest.raises(FileNotFoundError):  # the whole set needs its training files
        load_images("FashionMNIST", data_dir_=tmp_path, download=False)
    with pytest.raises(ValueError, match="scale"):
        load_test_images("FashionMNIST", data_dir_=tmp_path, scale="zscore")


def test_seed_everything_reproducible():
    seed_everything(3)
    a = torch.randn(3)
    seed_everything(3)
    assert torch.equal(a, torch.randn(3))
    with pytest.raises(ValueError, match="seed"):
        seed_everything(-1)
    with pytest.raises(ValueError, match="seed"):
        seed_everything("1")


def test_device_choice():
    assert get_device("cpu").type == "cpu"
    assert get_device(None).type in ("cpu", "cuda", "mps")
    with pytest.raises(ValueError, match="unknown device"):
        get_device("tpu9")


def test_profiles():
    p = get_profile("00_theory", "smoke")
    assert p.profile == "smoke" and p.n_draws > 0
    assert get_profile("00_theory", "smoke", n_draws=None).n_draws == p.n_draws
    assert get_profile("00_theory", "smoke", n_draws=7).n_draws == 7
    with pytest.raises(ValueError, match=r"valid profiles are \['smoke', 'default', 'paper'\]"):
        get_profile("00_theory", "fast")
    with pytest.raises(ValueError, match="not a setting"):
        get_profile("00_theory", "smoke", epochz=3)


def test_save_results_atomic_and_validated(tmp_path):
    path = save_results("99_test", "demo", {"method": "bbb_mixture"},
                        {"test_error": 0.0136, "nested": {"val_error": 0.01}}, "smoke", 0,
                        wall_s=1.5)
    rec = json.loads(path.read_text())
    assert path.parent.parent == results_dir()
    assert set(rec) >= {"profile", "seed", "device", "torch", "wall_s", "created", "config",
                        "metrics"}
    assert load_results("99_test", "demo")["metrics"]["test_error"] == 0.0136
    with pytest.raises(ValueError, match="fractions"):
        save_results("99_test", "bad", {}, {"test_error": 1.36}, "smoke", 0)
    with pytest.raises(ValueError, match="finite"):
        save_results("99_test", "bad", {}, {"loss": math.nan}, "smoke", 0)
    assert not (path.parent / "bad.json").exists()


def test_savefig_writes_png_and_pdf():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots()
    ax.plot([0, 1])
    paths = savefig(fig, "99_test", "line")
    assert [p.suffix for p in paths] == [".png", ".pdf"] and all(p.stat().st_size > 0 for p in paths)
    assert paths[0].name == "99_test-line.png"
    plt.close(fig)


def test_one_thread_restores_the_thread_count_even_after_an_error():
    from helpers.utils import one_thread
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        with pytest.raises(RuntimeError):
            with one_thread():
                assert torch.get_num_threads() == 1
                raise RuntimeError("boom")
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_saving_the_same_result_again_keeps_the_file(tmp_path):
    """A re-run that reproduces a result leaves its file alone (its machine, wall time and date
    stay those of the run that computed it); a changed number rewrites it."""
    import json
    from helpers.utils import save_results
    path = save_results("nb", "x", {"a": 1}, {"err": 0.1}, "default", 0, wall_s=5.0)
    first = path.read_bytes()
    record = json.loads(first)
    record["created"] = "2000-01-01T00:00:00+00:00"
    path.write_text(json.dumps(record, indent=2) + "\n")
    kept = path.read_bytes()
    save_results("nb", "x", {"a": 1}, {"err": 0.1}, "default", 0, wall_s=9.0)
    assert path.read_bytes() == kept
    save_results("nb", "x", {"a": 1}, {"err": 0.2}, "default", 0, wall_s=9.0)
    new = json.loads(path.read_text())
    assert new["metrics"]["err"] == 0.2 and new["wall_s"] == 9.0 and new["created"] != record["created"]
