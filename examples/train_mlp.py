"""The seed's PyTorch model, trained with cudakit on Fashion-MNIST (or MNIST).

    python examples/train_mlp.py [--epochs 5] [--quick] [--out DIR]
                                 [--dataset fashion-mnist|mnist] [--data DIR]
                                 [--model seed|logits|recipe|both|all] [--device DEVICE]

The seed ("How CUDA works with Python") ends in this loop, written for
PyTorch; with ``import cudakit as torch`` it reads the same:

    model = torch.nn.Sequential(torch.nn.Linear(784, 128), torch.nn.ReLU(),
                                torch.nn.Linear(128, 10), torch.nn.Softmax(dim=1))
    criterion = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters())
    for epoch in range(5):
        for data, target in train_loader:
            data, target = data.to(device), target.to(device)
            optimizer.zero_grad()
            loss = criterion(model(data), target)
            loss.backward()
            optimizer.step()

Its one mistake: CrossEntropyLoss takes logits and applies log-softmax
itself, so the final Softmax squashes what it sees (it still trains, more
slowly; cudakit warns once).  The script trains the model as written and
the fix (the same model without the Softmax), five epochs each on the
default device, with a progress bar an epoch; then prints test accuracy and
time per epoch and writes two PNGs under --out: the loss and accuracy curves
(train_mlp_curves.png) and sample test images with the predicted labels
(train_mlp_samples.png), plus the figures as train_mlp.json.

The images come from the machine, never from the network: Debian's
dataset-fashion-mnist package (``make demo`` installs it where it can),
``--data DIR`` (torchvision's or Keras's layout) or $CUDAKIT_DATA; see
cudakit.datasets.  ``--quick`` trains a few hundred steps (for CI).

``--model recipe`` (or ``all``) also trains the fix with a learning-rate
schedule, as PyTorch's recipes do: Adam at a peak of 2e-3 annealed to 0 by
``torch.optim.lr_scheduler.CosineAnnealingLR`` over the run's steps, stepped
each batch (88.4-88.5% test accuracy on Fashion-MNIST after five epochs,
against 87.2-87.8% with the seed's constant 1e-3; bench/results/2026-12-02e-cpu-mlp.md).
"""
import argparse
import json
import os
import sys
import time

import numpy as np

import cudakit as ck
from cudakit.utils.data import DataLoader, TensorDataset

BATCH = 64
NO_DATA = 3         # the exit status when the dataset is not on this machine (make demo goes on)


def load(dataset, root):
    from cudakit import datasets

    cls = datasets.FashionMNIST if dataset == "fashion-mnist" else datasets.MNIST
    train, test = cls(root, train=True), cls(root, train=False)
    return train, test


def as_inputs(images, mean, std):
    """(N, 28, 28) uint8 -> (N, 784) float32: ToTensor's [0, 1], standardised
    as torchvision's Normalize(mean, std) does, then flattened."""
    return (images.reshape(len(images), -1).astype(np.float32) / np.float32(255) - np.float32(mean)) / np.float32(std)


RECIPE_LR = 2e-3


def make_model(kind):
    layers = [ck.nn.Linear(784, 128), ck.nn.ReLU(), ck.nn.Linear(128, 10)]     # recipe: the logits model
    if kind == "seed":
        layers.append(ck.nn.Softmax(dim=1))     # as the seed writes it
    return ck.nn.Sequential(*layers)


def evaluate(model, x, y, batch=2000):
    """Accuracy over (x, y), both on the model's device."""
    model.eval()
    correct = None
    with ck.no_grad():
        for lo in range(0, len(y), batch):
            pred = model(x[lo:lo + batch]).argmax(1)
            c = (pred == y[lo:lo + batch]).sum()
            correct = c if correct is None else correct + c
    model.train()
    return int(correct) / len(y), pred


def train(kind, train_loader, test_x, test_y, epochs, max_steps, device, progress):
    model = make_model(kind)
    model.to(device)
    criterion = ck.nn.CrossEntropyLoss()
    optimizer = ck.optim.Adam(model.parameters())
    scheduler = None
    if kind == "recipe":
        optimizer = ck.optim.Adam(model.parameters(), lr=RECIPE_LR)
        total = min(epochs * len(train_loader), max_steps) if max_steps else epochs * len(train_loader)
        scheduler = ck.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=total)
    history = {"model": kind, "epochs": [], "step_loss": []}
    steps = 0
    for epoch in range(epochs):
        ck.cuda.synchronize(device)
        t0 = time.perf_counter()
        bar = progress(desc=f"{kind:6s} epoch {epoch + 1}/{epochs}", unit="batch",
                       total=min(len(train_loader), max_steps - steps) if max_steps else len(train_loader),
                       leave=True, file=sys.stdout)
        run_loss, run_n, loss_sum, correct, seen = None, 0, None, None, 0
        for data, target in train_loader:
            data, target = data.to(device), target.to(device)
            optimizer.zero_grad()
            output = model(data)
            loss = criterion(output, target)
            loss.backward()
            optimizer.step()
            if scheduler is not None:       # the recipe: the rate follows the cosine each batch
                scheduler.step()
            # running figures stay on the device; read every 50 steps (a read waits for the GPU)
            with ck.no_grad():
                d = loss.detach() * len(target)
                run_loss = d if run_loss is None else run_loss + d
                loss_sum = d if loss_sum is None else loss_sum + d
                c = (output.argmax(1) == target).sum()
                correct = c if correct is None else correct + c
            run_n += len(target)
            seen += len(target)
            steps += 1
            bar.update(1)
            if steps % 50 == 0:
                avg = float(run_loss) / run_n
                history["step_loss"].append((steps, avg))
                bar.set_postfix(loss=f"{avg:.4f}")
                run_loss, run_n = None, 0
            if max_steps and steps >= max_steps:
                break
        bar.close()
        ck.cuda.synchronize(device)
        seconds = time.perf_counter() - t0
        test_acc, _ = evaluate(model, test_x, test_y)
        history["epochs"].append({"epoch": epoch + 1, "seconds": seconds, "steps": steps,
                                  "train_loss": float(loss_sum) / seen, "train_accuracy": int(correct) / seen,
                                  "test_accuracy": test_acc})
        print(f"  {kind}: epoch {epoch + 1} in {seconds:.2f} s, train loss {float(loss_sum) / seen:.4f}, "
              f"test accuracy {100 * test_acc:.2f}%", flush=True)
        if max_steps and steps >= max_steps:
            break
    return model, history


def plot_curves(histories, path, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    for h in histories:
        label = {"seed": "seed's model (Softmax before the loss)", "logits": "logits (the fix)",
                 "recipe": "logits, Adam 2e-3 + cosine"}[h["model"]]
        if h["step_loss"]:
            s, l = zip(*h["step_loss"])
            ax1.plot(s, l, label=label)
        e = [r["epoch"] for r in h["epochs"]]
        line, = ax2.plot(e, [100 * r["test_accuracy"] for r in h["epochs"]], "o-", label=f"{label}, test")
        ax2.plot(e, [100 * r["train_accuracy"] for r in h["epochs"]], "s--", color=line.get_color(), alpha=0.6,
                 label=f"{label}, train")
    ax1.set(xlabel="step (batches of 64)", ylabel="cross-entropy loss (mean of 50 steps)", title="loss")
    ax2.set(xlabel="epoch", ylabel="accuracy (%)", title="accuracy")
    ax2.set_xticks(sorted({r["epoch"] for h in histories for r in h["epochs"]}))
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_samples(images, labels, predicted, classes, path, title, n=24):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cols = 8
    fig, axes = plt.subplots(n // cols, cols, figsize=(cols * 1.6, n // cols * 1.9))
    for ax, img, y, p in zip(axes.flat, images[:n], labels[:n], predicted[:n]):
        ax.imshow(img, cmap="gray_r")
        name = classes[p].split(" - ")[-1]
        ax.set_title(name if p == y else f"{name}\n(is {classes[y].split(' - ')[-1]})", fontsize=8,
                     color="green" if p == y else "red")
        ax.axis("off")
    fig.suptitle(title + " (green: right, red: wrong)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="a few hundred steps of one epoch (CI)")
    ap.add_argument("--steps", type=int, default=None, help="stop each model after this many steps")
    ap.add_argument("--out", default=os.path.join("build", "demo"))
    ap.add_argument("--dataset", choices=["fashion-mnist", "mnist"], default="fashion-mnist")
    ap.add_argument("--data", default=None, help="the folder holding the dataset's files (else found by itself)")
    ap.add_argument("--model", choices=["seed", "logits", "recipe", "both", "all"], default="both",
                    help="both: seed and logits; all: and the recipe (a cosine schedule)")
    ap.add_argument("--device", default=None, help="cpu, cuda, cuda:1 ... (the default device when not given)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    epochs = 1 if args.quick else args.epochs
    max_steps = args.steps if args.steps is not None else (300 if args.quick else None)

    from tqdm import tqdm

    device = ck.device(args.device) if args.device else ck.get_default_device()
    try:
        train_set, test_set = load(args.dataset, args.data)
    except FileNotFoundError as e:
        print(e, file=sys.stderr)
        sys.exit(NO_DATA)
    name = "Fashion-MNIST" if args.dataset == "fashion-mnist" else "MNIST"
    print(f"{name}: {len(train_set)} training and {len(test_set)} test images ({train_set.files[0]}); "
          f"training on {device}", flush=True)

    # the whole set on the device once; the loader gathers each batch there
    scaled = train_set.data / 255.0
    mean, std = scaled.mean(), scaled.std()          # Fashion-MNIST: 0.286, 0.353
    train_x = ck.asarray(as_inputs(train_set.data, mean, std), device=device)
    train_y = ck.asarray(train_set.targets, device=device)
    test_x = ck.asarray(as_inputs(test_set.data, mean, std), device=device)
    test_y = ck.asarray(test_set.targets, device=device)
    kinds = {"both": ["seed", "logits"], "all": ["seed", "logits", "recipe"]}.get(args.model, [args.model])
    histories, models = [], {}
    for kind in kinds:
        ck.random.seed(args.seed)       # the same initial weights and order for both models
        loader = DataLoader(TensorDataset(train_x, train_y), batch_size=BATCH, shuffle=True,
                            generator=ck.random.default_rng(args.seed))
        if kind == "seed":
            print("The seed's model, as written: Softmax(dim=1) before CrossEntropyLoss (which expects logits)")
        elif kind == "logits":
            print("The fix: the same model without the final Softmax (CrossEntropyLoss takes logits)")
        else:
            print("The fix with a schedule: Adam at 2e-3 annealed to 0 by CosineAnnealingLR, stepped each batch")
        models[kind], h = train(kind, loader, test_x, test_y, epochs, max_steps, device, tqdm)
        histories.append(h)

    os.makedirs(args.out, exist_ok=True)
    print()
    print(f"{'model':8s} {'test accuracy':>14s} {'s / epoch':>10s}")
    for h in histories:
        secs = [r["seconds"] for r in h["epochs"]]
        print(f"{h['model']:8s} {100 * h['epochs'][-1]['test_accuracy']:13.2f}% {np.mean(secs):10.2f}")
    best = "recipe" if "recipe" in models else "logits" if "logits" in models else kinds[0]
    _, pred = evaluate(models[best], test_x[:2000], test_y[:2000])
    curves = os.path.join(args.out, "train_mlp_curves.png")
    samples = os.path.join(args.out, "train_mlp_samples.png")
    plot_curves(histories, curves, f"The seed's MLP on {name}, cudakit on {device}")
    plot_samples(test_set.data, test_set.targets, ck.asnumpy(pred), test_set.classes, samples,
                 f"{name} test images, predicted by the {best} model")
    summary = {"dataset": name, "device": str(device), "epochs": epochs, "max_steps": max_steps, "models": histories}
    with open(os.path.join(args.out, "train_mlp.json"), "w") as f:
        json.dump(summary, f, indent=1)
    print(f"wrote {curves}, {samples} and {os.path.join(args.out, 'train_mlp.json')}")
    return summary


if __name__ == "__main__":
    main()
