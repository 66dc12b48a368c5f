"""Finding and reading MNIST and Fashion-MNIST: where the files may be, the
checks they must pass, the torchvision-style classes."""
import os

import numpy as np

from ..utils.data import Dataset
from ._idx import read_idx

IMAGES_MAGIC = 0x00000803     # 3-d uint8
LABELS_MAGIC = 0x00000801     # 1-d uint8

# split -> (images, labels), as the datasets' own pages name the files
FILES = {"train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
         "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")}

DEBIAN_DIR = "/usr/share/datasets"


class _Spec:
    def __init__(self, title, folder, aliases, debian_package, npz, classes):
        self.title = title                  # for messages
        self.folder = folder                # torchvision's root/<folder>/raw
        self.aliases = aliases              # other folder names people use
        self.debian_package = debian_package
        self.npz = npz                      # Keras's one-file form, or None
        self.classes = classes


MNIST_SPEC = _Spec("MNIST", "MNIST", ("mnist",), None, "mnist.npz",
                   ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four",
                    "5 - five", "6 - six", "7 - seven", "8 - eight", "9 - nine"])
FASHION_SPEC = _Spec("Fashion-MNIST", "FashionMNIST", ("fashion-mnist", "fashion_mnist"), "dataset-fashion-mnist", None,
                     ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                      "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"])


def _unique(paths):
    seen, out = set(), []
    for p in paths:
        p = os.path.abspath(os.path.expanduser(p))
        if p not in seen:
            seen.add(p)
            out.append(p)
    return out


def search_dirs(spec, root=None):
    """The folders looked in, first first: under root when it is given (only
    there); else under $CUDAKIT_DATA, then Keras's cache folder, then
    Debian's dataset packages' folder."""
    def under(base):
        return [os.path.join(base, spec.folder, "raw"), os.path.join(base, spec.folder), base] + \
               [os.path.join(base, a) for a in spec.aliases]

    if root is not None:
        return _unique(under(os.fspath(root)))
    dirs = []
    env = os.environ.get("CUDAKIT_DATA")
    if env:
        dirs += under(env)
    keras = os.path.join(os.environ.get("KERAS_HOME", os.path.join("~", ".keras")), "datasets")
    dirs += [os.path.join(keras, a) for a in spec.aliases] + [keras]
    dirs += [os.path.join(DEBIAN_DIR, a) for a in spec.aliases]
    return _unique(dirs)


def _file_in(folder, name):
    """The path of name in folder, or with the dot some copies have
    (train-images.idx3-ubyte), raw before gzip-compressed, or None."""
    dotted = name.replace("-idx", ".idx")
    for candidate in (name, dotted, name + ".gz", dotted + ".gz"):
        p = os.path.join(folder, candidate)
        if os.path.isfile(p):
            return p
    return None


def _check_pair(images, labels, img_path, lab_path):
    if images.shape[1:] != (28, 28):
        raise ValueError(f"{img_path}: images of shape {images.shape[1:]}, expected 28 x 28")
    if len(images) != len(labels):
        raise ValueError(f"{img_path} holds {len(images)} images but {lab_path} holds {len(labels)} labels")
    if labels.size and int(labels.max()) > 9:
        raise ValueError(f"{lab_path}: a label of {int(labels.max())}, expected 0 to 9")


def _read_split(folder, split):
    img_path, lab_path = (_file_in(folder, n) for n in FILES[split])
    images = read_idx(img_path, IMAGES_MAGIC)
    labels = read_idx(lab_path, LABELS_MAGIC)
    _check_pair(images, labels, img_path, lab_path)
    return images, labels, (img_path, lab_path)


def _read_npz(path, split):
    with np.load(path, allow_pickle=False) as z:
        missing = [k for k in (f"x_{split}", f"y_{split}") if k not in z.files]
        if missing:
            raise ValueError(f"{path}: no {' or '.join(missing)} in it (Keras's mnist.npz holds x_train, y_train, "
                             f"x_test, y_test)")
        images, labels = z[f"x_{split}"], z[f"y_{split}"]
    if images.dtype != np.uint8 or labels.dtype != np.uint8 or images.ndim != 3 or labels.ndim != 1:
        raise ValueError(f"{path}: x_{split} {images.dtype} {images.shape} and y_{split} {labels.dtype} "
                         f"{labels.shape}; expected uint8 (N, 28, 28) and uint8 (N,)")
    _check_pair(images, labels, path, path)
    return images, labels, (path,)


def find(spec, split, root=None, npz=None):
    """(images, labels, paths) of a split ('train' or 'test') as uint8 arrays,
    from the first folder holding that split's two IDX files (or Keras's npz
    file); FileNotFoundError saying what to put where when none does.
    npz: a path to a .npz file to read instead (Keras's load_data(path=))."""
    if npz is not None and (os.path.isabs(os.path.expanduser(npz)) or os.path.isfile(npz)):
        return _read_npz(os.path.expanduser(npz), split)
    dirs = search_dirs(spec, root)
    npz_name = npz if npz is not None else spec.npz
    for d in dirs:
        if all(_file_in(d, n) for n in FILES[split]):
            return _read_split(d, split)
        if npz_name and os.path.isfile(os.path.join(d, npz_name)):
            return _read_npz(os.path.join(d, npz_name), split)
    raise FileNotFoundError(not_found_message(spec, split, dirs, npz_name))


def not_found_message(spec, split, dirs, npz_name=None):
    names = ", ".join(f"{n}[.gz]" for s in ("train", "test") for n in FILES[s])
    also = f" or Keras's {npz_name}" if npz_name else ""
    lines = [f"{spec.title} ({split} split) was not found; cudakit downloads nothing and reads the four IDX "
             f"files ({names}){also} from the first of these folders that holds them:"]
    lines += [f"  {d}" for d in dirs]
    how = []
    if spec.debian_package:
        how.append(f"install Debian's package (`apt-get install {spec.debian_package}`, which puts them in "
                   f"{os.path.join(DEBIAN_DIR, spec.aliases[0])})")
    how.append(f"copy the files (from the dataset's own page, or a torchvision or Keras download) into one of "
               f"those folders (torchvision's layout, ROOT/{spec.folder}/raw/, works)")
    how.append("point root= or the CUDAKIT_DATA environment variable at the folder that holds them")
    lines.append("To get them: " + "; or ".join(how) + ".")
    return "\n".join(lines)


class _MNISTBase(Dataset):
    _spec = None

    def __init__(self, root=None, train=True, transform=None, target_transform=None, download=False):
        self.root = None if root is None else os.fspath(root)
        self.train = bool(train)
        self.transform = transform
        self.target_transform = target_transform
        split = "train" if self.train else "test"
        try:
            images, labels, self.files = find(self._spec, split, self.root)
        except FileNotFoundError as e:
            if download:
                raise FileNotFoundError(f"{e}\n(download=True: cudakit never downloads; the files must be "
                                        f"on this machine)") from None
            raise
        self.data = images
        self.targets = labels.astype(np.int64)

    classes = property(lambda self: list(self._spec.classes))

    @property
    def class_to_idx(self):
        return {c: i for i, c in enumerate(self._spec.classes)}

    def __len__(self):
        return len(self.data)

    def __getitem__(self, index):
        img, target = self.data[index], int(self.targets[index])
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __repr__(self):
        return (f"Dataset {type(self).__name__}\n    Number of datapoints: {len(self)}\n"
                f"    Split: {'Train' if self.train else 'Test'}\n    Files: {', '.join(self.files)}")


class MNIST(_MNISTBase):
    """MNIST's handwritten digits as torchvision's ``MNIST(root, train=True,
    transform=None, target_transform=None)``: ``ds[i]`` is ``(image, label)``,
    the image a (28, 28) uint8 NumPy array (``transform(image)`` when given),
    the label an int; ``ds.data`` (N, 28, 28) uint8 and ``ds.targets`` (N,)
    int64 hold them all.

    The files are read from ``root`` (``root/MNIST/raw/`` as torchvision lays
    them out, ``root`` itself, or ``root/mnist``: the four IDX files, raw or
    .gz, or Keras's ``mnist.npz``); without ``root``, from ``$CUDAKIT_DATA``
    the same way, then Keras's cache (``~/.keras/datasets``).  Nothing is
    downloaded: a missing dataset is a FileNotFoundError naming the files and
    the folders looked in."""
    _spec = MNIST_SPEC


class FashionMNIST(_MNISTBase):
    """Zalando's Fashion-MNIST (ten kinds of clothing, 28 x 28 grey images),
    as torchvision's ``FashionMNIST(root, train=True, transform=None,
    target_transform=None)``; see MNIST.  Without ``root`` the files are also
    found where Debian's ``dataset-fashion-mnist`` package puts them
    (/usr/share/datasets/fashion-mnist)."""
    _spec = FASHION_SPEC


def load_data(spec, root=None, npz=None):
    (x_train, y_train, _), (x_test, y_test, _) = (find(spec, s, root, npz) for s in ("train", "test"))
    return (x_train, y_train), (x_test, y_test)
