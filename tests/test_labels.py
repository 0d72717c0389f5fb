"""Labels outside 0..C-1 (C = the number of classes) reaching training or metrics are a clear
ValueError, never torch's IndexError or a silently wrong score."""
import pytest
import torch

import helpers as H
from helpers import metrics
from helpers.data import check_labels


def tiny_data(y_train, y_val=None, classes=10):
    g = torch.Generator().manual_seed(0)
    x = torch.rand(16, 784, generator=g)
    y_ok = torch.randint(0, classes, (16,), generator=g)
    y_val = y_ok if y_val is None else y_val
    return H.ImageData(x, y_train, x, y_val, x, y_ok, name="toy")


@pytest.mark.parametrize("bad", [10, 12, -1])
def test_fit_refuses_training_labels_outside_the_classes(bad):
    y = torch.randint(0, 10, (16,))
    y[3] = bad
    with pytest.raises(ValueError, match=r"y_train hold labels .* 0\.\.9 \(10 classes\)"):
        H.fit(H.mlp(784, (8,), 10), tiny_data(y), epochs=1, batch_size=8)


def test_fit_refuses_evaluation_labels_outside_the_classes():
    y = torch.randint(0, 10, (16,))
    y_val = y.clone()
    y_val[0] = 10
    with pytest.raises(ValueError, match="y_val hold labels from 0 to 10"):
        H.fit(H.BayesMLP(784, (8,), 10), tiny_data(y, y_val), epochs=1, batch_size=8)


def test_fit_counts_the_classes_of_the_model_not_of_mnist():
    y = torch.randint(0, 2, (16,))
    y[0] = 2  # a 2-class network: label 2 is out of range although it is a digit
    with pytest.raises(ValueError, match=r"0\.\.1 \(2 classes\)"):
        H.fit(H.mlp(784, (8,), 2), tiny_data(y, classes=2), epochs=1, batch_size=8)
    y[0] = 1
    assert len(H.fit(H.mlp(784, (8,), 2), tiny_data(y, classes=2), epochs=1, batch_size=8)) == 1


@pytest.mark.parametrize("score", [metrics.error_rate, metrics.nll, metrics.brier, metrics.ece])
def test_metrics_refuse_labels_outside_the_classes(score):
    probs = torch.full((4, 10), 0.1)
    with pytest.raises(ValueError, match=r"labels from 0 to 10; they must be in 0\.\.9"):
        score(probs, torch.tensor([0, 3, 10, 9]))
    with pytest.raises(ValueError, match="integer class indices"):
        score(probs, torch.tensor([0.0, 3.0, 1.0, 9.0]))


def test_check_labels_accepts_the_classes_and_an_empty_set():
    y = torch.arange(10)
    assert check_labels(y, 10) is y
    check_labels(torch.zeros(0, dtype=torch.long), 10)
    with pytest.raises(ValueError, match="0 or more"):
        check_labels(torch.tensor([-3, 1]))
