"""tensoracle.cache (list / info / verify / prune / clear) and CacheStore on a temporary cache."""

import pytest

import tensoracle


def open_tinynet(package_path, shape=None, **kwargs):
    build = tensoracle.ModelPackage.load(package_path).engine_build("tinynet")
    if shape is not None:
        build.inputs = {"image": shape}
    build.quiet = True
    return tensoracle.open_engine(build, **kwargs)


def test_list_info_verify_prune_clear(tinynet_package, cache_dir):
    first = open_tinynet(tinynet_package, (1, 3, 16, 16))
    second = open_tinynet(tinynet_package, (2, 3, 16, 16))
    assert first.key != second.key and first.built and second.built

    entries = tensoracle.cache.list()
    assert [e.key for e in entries] == [second.key, first.key]  # most recently used first
    assert all(e.engine_name == "tinynet" and e.engine_bytes > 0 for e in entries)
    assert [e.key for e in tensoracle.cache.list(cache_dir)] == [e.key for e in entries]

    info = tensoracle.cache.info(first.key[:12])
    assert info.key == first.key and '"engine_name": "tinynet"' in info.manifest_json
    assert info.manifest_json == first.engine.key_manifest
    with pytest.raises(tensoracle.NotFoundError):
        tensoracle.cache.info("ffffffffffff")

    assert tensoracle.cache.verify() == []

    store = tensoracle.CacheStore(cache_dir)
    assert store.directory == str(cache_dir)
    kept = store.prune(entries[0].engine_bytes + entries[0].manifest_bytes)
    assert kept.removed_keys == [first.key]  # the least recently used goes first
    assert [e.key for e in store.list()] == [second.key]

    cleared = tensoracle.cache.clear()
    assert cleared.removed_keys == [second.key] and cleared.bytes_left == 0
    assert tensoracle.cache.list() == []


def test_verify_reports_a_damaged_engine_and_open_rebuilds_it(tinynet_package, cache_dir):
    opened = open_tinynet(tinynet_package)
    path = cache_dir / f"{opened.key}.engine"
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))

    [problem] = tensoracle.cache.verify()
    assert problem.key == opened.key and "checksum" in problem.reason
    with pytest.raises(tensoracle.Error, match="checksum"):
        open_tinynet(tinynet_package, policy="require-cached")
    rebuilt = open_tinynet(tinynet_package)
    assert rebuilt.built and rebuilt.key == opened.key
    assert any("checksum" in w for w in rebuilt.warnings)
    assert tensoracle.cache.verify() == []


def test_sizes_are_bytes_or_text():
    assert tensoracle.cache.parse_byte_size("1.5K") == 1536
    assert tensoracle.CacheStore(max_size="10G").max_size_bytes == 10 << 30
    with pytest.raises(tensoracle.InvalidArgumentError):
        tensoracle.CacheStore(max_size="lots")
    assert tensoracle.cache.default_cache_directory().endswith("cache")  # the test's TENSORACLE_CACHE_DIR
