"""Helpers for the Bayes-by-Backprop notebooks (Blundell et al., 2015).

Import what a notebook needs in one line, e.g. ``from helpers import BayesMLP, fit, savefig``.
"""
from .data import (ImageData, data_dir, load_images, load_mnist, load_mushroom, load_test_images,
                   make_toy_2d, verify_checksums)
from .elbo import ELBO, categorical_nll, elbo, gaussian_nll, kl_weights, sample_forward
from .layers import (BayesConv2d, BayesLinear, BayesMLP, bayes_conv_net, bayes_layers, bayesify,
                     closed_form_kl, configure, copy_means, kl_divergence, mlp, sampling,
                     set_sampling, standard_normal)
from .metrics import (Prediction, auroc, brier, ece, error_rate, mcnemar, mutual_information,
                      nll, predict, predictive_entropy, reliability)
from .plotting import percent_axis, savefig, show_table, use_style
from .priors import (CauchyPrior, FlatPrior, GaussianPrior, LaplacePrior, LearnedScalePrior, Prior,
                     ScaleMixturePrior, make_prior)
from .profiles import PROFILE_NAMES, get_profile
from .train import (evaluate_error, fit, load_checkpoint, make_optimizer, misclassified,
                    save_checkpoint)
from .utils import (checkpoints_dir, figures_dir, get_device, load_results, machine_info, pending,
                    progress, results_dir, save_results, seed_everything)

__version__ = "0.1.0"
