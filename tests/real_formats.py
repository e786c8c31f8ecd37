"""Small files in the real data sets' published formats, written by the tests (nothing is downloaded)."""
import gzip
import io
import tarfile

import h5py
import numpy as np


def idx_gz(array: np.ndarray) -> bytes:
    """A gzipped IDX file (the MNIST format) holding ``array`` as unsigned bytes."""
    header = bytes([0, 0, 0x08, array.ndim]) + b"".join(int(d).to_bytes(4, "big") for d in array.shape)
    return gzip.compress(header + array.astype(">u1").tobytes())


def write_mnist_files(folder, train_labels, test_labels, seed: int = 0) -> None:
    """``folder`` (created) with the four gzipped IDX files of MNIST / Fashion-MNIST: random 28x28 images with
    the given labels."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    for prefix, y in (("train", np.asarray(train_labels)), ("t10k", np.asarray(test_labels))):
        (folder / f"{prefix}-images-idx3-ubyte.gz").write_bytes(idx_gz(rng.integers(0, 256, (len(y), 28, 28))))
        (folder / f"{prefix}-labels-idx1-ubyte.gz").write_bytes(idx_gz(y))


def write_tff_h5(path, clients: dict[str, dict[str, np.ndarray]]) -> None:
    """A TensorFlow Federated client file: ``examples/<client>/<field>``."""
    with h5py.File(path, "w") as f:
        for cid, fields in clients.items():
            for name, values in fields.items():
                f.create_dataset(f"examples/{cid}/{name}", data=values)


def write_tar_bz2(archive, files) -> None:
    """A ``.tar.bz2`` archive of ``files`` at its top level (as TFF publishes its HDF5 files)."""
    with tarfile.open(archive, "w:bz2") as tar:
        for path in files:
            tar.add(path, arcname=path.name)


def write_cifar10_archive(folder, per_batch: int = 60) -> None:
    """``folder/cifar-10-binary.tar.gz``: five training batches and a test batch of ``per_batch`` random images
    each, labels cycling through the ten classes."""
    rng = np.random.default_rng(0)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name in [f"data_batch_{i}.bin" for i in range(1, 6)] + ["test_batch.bin"]:
            labels = np.arange(per_batch) % 10
            payload = np.concatenate([labels[:, None], rng.integers(0, 256, (per_batch, 3072))], 1).astype(np.uint8)
            info = tarfile.TarInfo(f"cifar-10-batches-bin/{name}")
            info.size = payload.nbytes
            tar.addfile(info, io.BytesIO(payload.tobytes()))
    folder.mkdir(parents=True)
    (folder / "cifar-10-binary.tar.gz").write_bytes(buffer.getvalue())
