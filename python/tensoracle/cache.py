"""The engine cache as functions, like `tensoracle cache list | info | verify | prune | clear`
(docs/cache.md). Each takes the cache directory (default: $TENSORACLE_CACHE_DIR, else
$XDG_CACHE_HOME/tensoracle, else ~/.cache/tensoracle); CacheStore holds one directory."""

import os
from typing import List, Optional, Union

from ._tensoracle import CacheEntry, CachePruneResult, CacheProblem, CacheStore, default_cache_directory, parse_byte_size

Directory = Union[str, "os.PathLike[str]", None]

__all__ = [
    "CacheEntry",
    "CachePruneResult",
    "CacheProblem",
    "CacheStore",
    "clear",
    "default_cache_directory",
    "info",
    "list",
    "parse_byte_size",
    "prune",
    "verify",
]


def list(directory: Directory = None) -> List[CacheEntry]:  # noqa: A001 (the command's name)
    """Cached engines, most recently used first."""
    return CacheStore(directory).list()


def info(key: str, directory: Directory = None) -> CacheEntry:
    """One entry by its key or a unique prefix of it."""
    return CacheStore(directory).info(key)


def verify(directory: Directory = None) -> List[CacheProblem]:
    """Every bad entry (checksum, structure, manifest vs engine vs key); empty when all are good."""
    return CacheStore(directory).verify()


def prune(max_size: Optional[Union[int, str]] = None, directory: Directory = None) -> CachePruneResult:
    """Evicts least-recently-used engines down to max_size (bytes or "10G"; default
    $TENSORACLE_CACHE_MAX_SIZE, else 20G) and removes leftovers of interrupted writes."""
    return CacheStore(directory).prune(max_size)


def clear(directory: Directory = None) -> CachePruneResult:
    """Removes every cached engine not in use by another process."""
    return CacheStore(directory).clear()
