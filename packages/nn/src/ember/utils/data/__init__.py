"""ember.utils.data: torch.utils.data, PyTorch's data loading, over Ember's tensors.

- Datasets: ``Dataset`` (map-style: ``__getitem__``, ``__len__``, optionally
  ``__getitems__`` for whole batches) and ``IterableDataset`` (a stream: ``__iter__``), and
  the wrappers ``TensorDataset``, ``StackDataset``, ``ConcatDataset``, ``ChainDataset``,
  ``Subset``; ``random_split`` splits a dataset by lengths or fractions.
- Samplers (the order a map-style dataset is read in): ``SequentialSampler``,
  ``RandomSampler``, ``SubsetRandomSampler``, ``WeightedRandomSampler``, and
  ``BatchSampler``, which groups indices into batches. The random ones draw from Ember's
  generators: ``ember.manual_seed`` or a ``generator`` argument makes them reproducible.
- ``default_collate`` merges a list of samples into a batch (tensors stacked; NumPy arrays
  and Python numbers made tensors of torch's dtypes; dicts, named tuples and sequences
  collated field by field); ``default_convert`` only turns NumPy arrays into tensors.
- ``DataLoader`` puts them together, with torch's arguments. With ``num_workers > 0`` it
  starts worker processes (``fork`` on Linux, or the given ``multiprocessing_context``):
  each receives batches of indices through a queue and sends back collated batches, which
  the loader returns in the sampler's order. Worker ``i`` seeds Python's ``random``,
  Ember's default generator and NumPy's legacy generator from ``base_seed + i`` (the base
  seed is drawn from the loader's ``generator`` at each ``iter()``), then calls
  ``worker_init_fn(i)``; ``get_worker_info()`` tells the code running in a worker its id,
  the number of workers, its seed and its copy of the dataset (and returns None in the main
  process), which is how an ``IterableDataset`` shards its stream between workers.
  An exception raised in a worker is raised again in the main process, with its type and a
  message "Caught <type> in DataLoader worker process <i>." followed by the worker's
  traceback; a worker that dies (killed, or exiting) gives RuntimeError naming its pid
  instead of a hang; a batch that cannot be pickled comes back as an error too. Workers
  stop when the pass ends or its iterator is deleted (``persistent_workers`` keeps them for
  the next epoch). Tensors cross between processes by pickling their NumPy data.
"""

from .collate import default_collate, default_convert
from .dataloader import DataLoader
from .dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from .sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)
from .worker import get_worker_info

__all__ = [
    "BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset", "IterableDataset",
    "RandomSampler", "Sampler", "SequentialSampler", "StackDataset", "Subset",
    "SubsetRandomSampler", "TensorDataset", "WeightedRandomSampler", "default_collate",
    "default_convert", "get_worker_info", "random_split",
]
